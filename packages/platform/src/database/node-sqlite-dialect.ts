import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite'
import { setTimeout } from 'node:timers/promises'
import {
  CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type Kysely,
  SqliteAdapter,
  type SqliteDatabase,
  type SqliteDialectConfig,
  SqliteDriver,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type SqliteStatement,
  type TransactionSettings,
} from 'kysely'

const STATEMENT_CACHE_SIZE = 200
const DDL = /^\s*(create|alter|drop)\b/i

type Row = Record<string, unknown>

interface CachedStatement {
  readonly statement: StatementSync
  columnNames: string[]
}

/** Adapts a node:sqlite `DatabaseSync` to the better-sqlite3-shaped `SqliteDatabase` that Kysely's SQLite driver calls. */
export function createNodeSqliteDatabase(database: DatabaseSync): SqliteDatabase {
  // Kysely prepares every query anew; preparing costs several times more than running a point read.
  const cache = new Map<string, CachedStatement>()

  function prepareCached(sql: string): CachedStatement {
    // A statement prepared before a schema change would keep stale column names for `select *`.
    if (DDL.test(sql)) {
      cache.clear()
      return prepareRows(sql)
    }
    const hit = cache.get(sql)
    if (hit !== undefined) {
      cache.delete(sql)
      cache.set(sql, hit)
      return hit
    }
    const entry = prepareRows(sql)
    cache.set(sql, entry)
    if (cache.size > STATEMENT_CACHE_SIZE) {
      const oldest = cache.keys().next()
      if (oldest.done !== true) cache.delete(oldest.value)
    }
    return entry
  }

  function prepareRows(sql: string): CachedStatement {
    const statement = database.prepare(sql)
    // Arrays plus our own plain objects are faster than node:sqlite's null-prototype rows, and plain
    // objects compare equal to object literals under assert.deepStrictEqual, as pg rows do.
    statement.setReturnArrays(true)
    return { statement, columnNames: statement.columns().map((column) => column.name) }
  }

  return {
    prepare(sql: string): SqliteStatement {
      const entry = prepareCached(sql)
      const { statement } = entry
      return {
        reader: entry.columnNames.length > 0,
        all: (parameters) => statement.all(...bindAll(parameters)).map((row) => toObject(entry, row)),
        run: (parameters) => statement.run(...bindAll(parameters)),
        *iterate(parameters) {
          for (const row of statement.iterate(...bindAll(parameters))) yield toObject(entry, row)
        },
      }
    },
    close() {
      cache.clear()
      if (database.isOpen) database.close()
    },
  }
}

function toObject(entry: CachedStatement, row: unknown): Row {
  const values = row as unknown[]
  if (entry.columnNames.length !== values.length) {
    // Another connection changed the table under a `select *`; SQLite re-prepared the statement.
    entry.columnNames = entry.statement.columns().map((column) => column.name)
  }
  const names = entry.columnNames
  const object: Row = {}
  for (let i = 0; i < names.length; i++) object[names[i]!] = values[i]
  return object
}

function bindAll(parameters: ReadonlyArray<unknown>): SQLInputValue[] {
  const values: SQLInputValue[] = new Array(parameters.length)
  for (let i = 0; i < parameters.length; i++) values[i] = bind(parameters[i], i + 1)
  return values
}

function bind(value: unknown, position: number): SQLInputValue {
  switch (typeof value) {
    case 'number':
    case 'string':
    case 'bigint':
      return value
    case 'boolean':
      return value ? 1 : 0
    case 'object':
      if (value === null || ArrayBuffer.isView(value)) return value as SQLInputValue
  }
  // node:sqlite silently binds a Date or any other object as NULL; refuse instead.
  const kind = value instanceof Date ? 'Date (store times as epoch-ms numbers)' : typeof value
  throw new TypeError(`SQLite parameter ${position} is a ${kind}, which node:sqlite cannot store`)
}

export interface NodeSqliteDialectOptions {
  /** Runs before each transaction begins (the checkpoints of a writer that never lets go: sqlite-checkpoints.ts). */
  beforeTransaction?: () => void
  /**
   * How long a transaction waits for another connection's write lock before it fails with
   * `database is locked`, in ms of wall-clock time. The connection's own `busy_timeout` should be
   * the same: it still governs statements outside transactions. Default SQLITE_BUSY_TIMEOUT_MS.
   */
  busyTimeoutMs?: number
}

/** How long a writer waits for another connection's lock, by default: the connection's `busy_timeout` and a transaction's wall-clock wait. */
export const SQLITE_BUSY_TIMEOUT_MS = 5000
const SQLITE_BUSY = 5
const LONGEST_RETRY_MS = 10

function isBusy(error: unknown): boolean {
  // The extended codes (SQLITE_BUSY_SNAPSHOT …) keep the primary code in their low byte.
  return ((error as { errcode?: number }).errcode ?? 0) % 256 === SQLITE_BUSY
}

/**
 * Kysely's SQLite driver, except that transactions begin IMMEDIATE, so that writers queue for the
 * write lock instead of failing when they first write, and that they queue without blocking the thread.
 *
 * SQLite's own wait for a lock (`busy_timeout`) sleeps in the calling thread: the whole process
 * stopped for as long as another connection held the lock (the checkpoint thread's RESTART holds it
 * for 35–65 ms while it syncs), and its sleeps end early at every signal, which shortens the wait by
 * as much (under a CPU profiler's signals, 5 s lasted 39 ms and sends failed with `database is
 * locked`; issue 22). So BEGIN IMMEDIATE runs with `busy_timeout` 0 and is tried again after
 * timers, until `busyTimeoutMs` of wall-clock time has passed.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  readonly #beforeTransaction: () => void
  readonly #busyTimeoutMs: number

  constructor(
    config: SqliteDialectConfig,
    { beforeTransaction = () => {}, busyTimeoutMs = SQLITE_BUSY_TIMEOUT_MS }: NodeSqliteDialectOptions,
  ) {
    super(config)
    this.#beforeTransaction = beforeTransaction
    this.#busyTimeoutMs = busyTimeoutMs
  }

  override async beginTransaction(connection: DatabaseConnection, settings?: TransactionSettings): Promise<void> {
    this.#beforeTransaction()
    // A deferred transaction that reads, then writes, fails with SQLITE_BUSY at once when another
    // connection wrote in between; BEGIN IMMEDIATE takes the write lock up front and waits instead.
    if (settings?.accessMode === 'read only') {
      await connection.executeQuery(CompiledQuery.raw('begin deferred'))
      return
    }
    const deadline = performance.now() + this.#busyTimeoutMs
    await connection.executeQuery(CompiledQuery.raw('pragma busy_timeout = 0'))
    try {
      for (let retry = 0; ; retry++) {
        try {
          await connection.executeQuery(CompiledQuery.raw('begin immediate'))
          return
        } catch (error) {
          if (!isBusy(error) || performance.now() >= deadline) throw error
        }
        await setTimeout(Math.min(2 ** retry, LONGEST_RETRY_MS))
      }
    } finally {
      await connection.executeQuery(CompiledQuery.raw(`pragma busy_timeout = ${this.#busyTimeoutMs}`))
    }
  }
}

/** Kysely's SQLite adapter, except that migrations run inside one transaction, which SQLite supports for DDL. */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true
  }
}

/** A Kysely dialect over an open node:sqlite database; Kysely's `destroy()` closes it. */
export function createNodeSqliteDialect(database: DatabaseSync, options: NodeSqliteDialectOptions = {}): Dialect {
  return {
    createDriver: () => new ImmediateSqliteDriver({ database: createNodeSqliteDatabase(database) }, options),
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createAdapter: () => new TransactionalDdlSqliteAdapter(),
    // biome-ignore lint/suspicious/noExplicitAny: Kysely's Dialect interface types the instance as Kysely<any>
    createIntrospector: (db: Kysely<any>): DatabaseIntrospector => new SqliteIntrospector(db),
  }
}
