import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { type Dialect, Kysely, type LogEvent, PostgresDialect } from 'kysely'
import { Pool, types } from 'pg'
import { createNodeSqliteDialect, SQLITE_BUSY_TIMEOUT_MS } from './node-sqlite-dialect.ts'
import { createCurrentSchemaIntrospector } from './postgres-introspector.ts'
import { checkpointInBackground } from './sqlite-checkpoints.ts'

/** The SQL dialects a database URL can select. */
export type DatabaseDialect = 'sqlite' | 'postgres'

/** An open database: the Kysely instance, which dialect it speaks, and how to close it. */
export interface Database<DB> {
  readonly db: Kysely<DB>
  readonly dialect: DatabaseDialect
  /** The URL as given; it may carry a password, so never log it. */
  readonly url: string
  /** The PostgreSQL connection pool's counts; undefined on SQLite, which has one connection. */
  poolStats(): PoolStats | undefined
  /** Calls `listener` with every error a query fails with (for the query error metric). */
  onQueryError(listener: (error: unknown) => void): void
  destroy(): Promise<void>
}

/** Connections of a PostgreSQL pool: open, idle among them, and requests waiting for one. */
export interface PoolStats {
  total: number
  idle: number
  waiting: number
}

/** Kysely's log hook, handing failed queries to the listeners a database was given. */
function queryErrorLog(listeners: Set<(error: unknown) => void>) {
  return (event: LogEvent) => {
    if (event.level === 'error') for (const listener of listeners) listener(event.error)
  }
}

/** Options for `createDatabase`. */
export interface DatabaseOptions {
  /** Called when an idle pooled PostgreSQL connection fails; the pool replaces it. Defaults to ignoring it. */
  onConnectionError?: (error: Error) => void
}

const ACCEPTED_FORMS =
  'sqlite:<path> (e.g. sqlite:./data/chat.db or sqlite:/var/lib/atrium/chat.db), sqlite::memory:, ' +
  'or postgres://user@host:port/database (postgresql:// too) with an optional ?schema=<name>'

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

const OID_INT8 = 20
const OID_INT8_ARRAY = 1016
const OID_NUMERIC = 1700

/** Opens the database a URL names: `sqlite:<path>`, `sqlite::memory:` or `postgres://…[?schema=<name>]`. */
export function createDatabase<DB>(url: string, options: DatabaseOptions = {}): Database<DB> {
  if (url.startsWith('sqlite:')) return openSqlite<DB>(url)
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgres<DB>(url, options)
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? 'no scheme'
  throw new Error(`unsupported database URL (${scheme}): use ${ACCEPTED_FORMS}`)
}

function openSqlite<DB>(url: string): Database<DB> {
  const path = url.slice('sqlite:'.length)
  if (path === '' || path.startsWith('//')) {
    throw new Error(`invalid SQLite database URL: use ${ACCEPTED_FORMS}`)
  }
  const location = path === ':memory:' ? path : resolve(path)
  if (location !== ':memory:') mkdirSync(dirname(location), { recursive: true })
  const sqlite = new DatabaseSync(location)
  // busy_timeout first: switching to WAL needs a lock that another process may hold.
  // synchronous=NORMAL is durable across application crashes in WAL mode and ~10x faster than FULL.
  sqlite.exec(`
    pragma busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS};
    pragma journal_mode = WAL;
    pragma synchronous = NORMAL;
    pragma foreign_keys = ON;
  `)
  const checkpoints = location === ':memory:' ? undefined : checkpointInBackground(sqlite, location)
  const errorListeners = new Set<(error: unknown) => void>()
  const dialect = createNodeSqliteDialect(sqlite, {
    beforeTransaction: checkpoints?.beforeTransaction,
    busyTimeoutMs: SQLITE_BUSY_TIMEOUT_MS,
  })
  const db = new Kysely<DB>({ dialect, log: queryErrorLog(errorListeners) })
  return {
    db,
    dialect: 'sqlite',
    url,
    poolStats: () => undefined,
    onQueryError: (listener) => errorListeners.add(listener),
    async destroy() {
      await checkpoints?.stop()
      await db.destroy()
      // Kysely closes the database only if a query ever ran.
      if (sqlite.isOpen) sqlite.close()
    },
  }
}

/** node-postgres's pool size when the URL names none. */
export const DEFAULT_POOL_MAX = 10

/**
 * How to connect to a `postgres://…[?schema=<name>][&pool_max=<n>]` URL: node-postgres's settings,
 * the schema and the pool's size.
 */
export interface PostgresConnection {
  connectionString: string
  /** Startup options (`-c search_path=<schema>` and the URL's own `options`), when there are any. */
  options?: string
  /** The URL's schema; null for the server's default search path. */
  schema: string | null
  /** The most connections the process's pool opens (`pool_max`, 1–1000; DEFAULT_POOL_MAX without it). */
  poolMax: number
}

/** The URL's `pool_max`, or DEFAULT_POOL_MAX; anything but a whole number from 1 to 1000 is refused. */
function poolMaxOf(value: string | null): number {
  if (value === null) return DEFAULT_POOL_MAX
  const max = Number(value)
  if (!/^\d+$/.test(value) || max < 1 || max > 1000) {
    throw new Error(`invalid pool_max in database URL: "${value}" must be a whole number from 1 to 1000`)
  }
  return max
}

/** Parses a PostgreSQL database URL as `createDatabase` connects to it. */
export function postgresConnection(url: string): PostgresConnection {
  const parsed = new URL(url)
  const schema = parsed.searchParams.get('schema')
  parsed.searchParams.delete('schema')
  const poolMax = poolMaxOf(parsed.searchParams.get('pool_max'))
  parsed.searchParams.delete('pool_max')
  let startupOptions = parsed.searchParams.get('options') ?? ''
  parsed.searchParams.delete('options')
  if (schema !== null) {
    if (!SCHEMA_NAME.test(schema)) {
      throw new Error(`invalid schema in database URL: "${schema}" must match ${SCHEMA_NAME}`)
    }
    // A startup parameter applies to every pooled connection before its first query, and RESET ALL keeps it.
    startupOptions = `${startupOptions} -c search_path=${schema}`.trim()
  }
  return {
    connectionString: parsed.toString(),
    ...(startupOptions === '' ? {} : { options: startupOptions }),
    schema,
    poolMax,
  }
}

function openPostgres<DB>(url: string, options: DatabaseOptions): Database<DB> {
  const { schema: _schema, poolMax, ...connection } = postgresConnection(url)
  const pool = new Pool({ ...connection, max: poolMax, types: { getTypeParser } })
  // Without a listener, an idle connection dropped by the server would crash the process.
  pool.on('error', options.onConnectionError ?? (() => {}))
  const postgres = new PostgresDialect({ pool })
  const dialect: Dialect = {
    createDriver: () => postgres.createDriver(),
    createQueryCompiler: () => postgres.createQueryCompiler(),
    createAdapter: () => postgres.createAdapter(),
    createIntrospector: createCurrentSchemaIntrospector,
  }
  const errorListeners = new Set<(error: unknown) => void>()
  const db = new Kysely<DB>({ dialect, log: queryErrorLog(errorListeners) })
  return {
    db,
    dialect: 'postgres',
    url,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    onQueryError: (listener) => errorListeners.add(listener),
    destroy: () => db.destroy(),
  }
}

// Per-pool parsers (never pg.types.setTypeParser, which would change every pool in the process):
// bigint ids, times and counts read as numbers like on SQLite, and never silently lose precision.
const defaultTypeParser = types.getTypeParser as (oid: number, format?: string) => (text: string) => unknown

const getTypeParser = ((oid: number, format?: string) => {
  if (format === undefined || format === 'text') {
    if (oid === OID_INT8) return parseInt8
    if (oid === OID_NUMERIC) return parseNumeric
    if (oid === OID_INT8_ARRAY) {
      const parseTexts = defaultTypeParser(oid, 'text') as (text: string) => (string | null)[]
      return (text: string) => parseTexts(text).map((item) => (item === null ? null : parseInt8(item)))
    }
  }
  return defaultTypeParser(oid, format)
}) as typeof types.getTypeParser

function parseInt8(text: string): number {
  const value = Number(text)
  if (!Number.isSafeInteger(value)) throw new RangeError(`int8 value ${text} is beyond Number.MAX_SAFE_INTEGER`)
  return value
}

function parseNumeric(text: string): number {
  const value = Number(text)
  if (!(Math.abs(value) <= Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`numeric value ${text} is beyond Number.MAX_SAFE_INTEGER`)
  }
  return value
}
