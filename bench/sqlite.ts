/**
 * Kysely on node:sqlite versus node:sqlite prepared statements: `npm exec -- node bench/sqlite.ts [rows]`.
 * Both files use WAL with synchronous=NORMAL, as `createDatabase` sets them.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { CompiledQuery } from 'kysely'
import { columnType, createDatabase, notNullDefault, primaryKey } from '../packages/platform/src/database/index.ts'

interface BenchDB {
  item: { id: number; chat_id: number; created: number; text: string }
}

const rows = Number(process.argv[2] ?? 200_000)
const readRounds = 3
const firstId = 1_000_000_000_000
const directory = mkdtempSync(join(tmpdir(), 'atrium-bench-'))

function item(i: number): BenchDB['item'] {
  return { id: firstId + i, chat_id: i % 100, created: 1_790_000_000_000 + i, text: `message number ${i}` }
}

// Reads visit every row once in a scattered order (a stride coprime with the row count).
function readOrder(i: number): number {
  return firstId + ((i * 7919) % rows)
}

function rate(count: number, run: () => void | Promise<void>): Promise<number> {
  const started = process.hrtime.bigint()
  return Promise.resolve(run()).then(() => count / (Number(process.hrtime.bigint() - started) / 1e9))
}

async function median(run: () => Promise<number>): Promise<number> {
  const rates: number[] = []
  for (let round = 0; round < readRounds; round++) rates.push(await run())
  return rates.sort((a, b) => a - b)[Math.floor(readRounds / 2)]!
}

async function benchKysely(): Promise<{ insert: number; read: number; readPrebuilt: number }> {
  const database = createDatabase<BenchDB>(`sqlite:${join(directory, 'kysely.db')}`)
  const { db } = database
  await db.schema
    .createTable('item')
    .addColumn('id', columnType.id, primaryKey())
    .addColumn('chat_id', columnType.id, notNullDefault(0))
    .addColumn('created', columnType.time, notNullDefault(0))
    .addColumn('text', columnType.text, notNullDefault(''))
    .execute()
  const insert = await rate(rows, () =>
    db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows; i++) await trx.insertInto('item').values(item(i)).execute()
    }),
  )
  const read = await median(() =>
    rate(rows, async () => {
      for (let i = 0; i < rows; i++) {
        const row = await db.selectFrom('item').selectAll().where('id', '=', readOrder(i)).executeTakeFirst()
        if (row === undefined) throw new Error('missing row')
      }
    }),
  )
  const readPrebuilt = await median(() =>
    rate(rows, async () => {
      for (let i = 0; i < rows; i++) {
        const query = CompiledQuery.raw('select * from "item" where "id" = ?', [readOrder(i)])
        if ((await db.executeQuery(query)).rows.length !== 1) throw new Error('missing row')
      }
    }),
  )
  await database.destroy()
  return { insert, read, readPrebuilt }
}

async function benchNodeSqlite(): Promise<{ insert: number; read: number }> {
  const db = new DatabaseSync(join(directory, 'raw.db'))
  db.exec('pragma journal_mode = WAL; pragma synchronous = NORMAL; pragma foreign_keys = ON')
  db.exec(`create table item (
    id bigint not null primary key, chat_id bigint not null default 0,
    created bigint not null default 0, text text not null default '')`)
  const insertItem = db.prepare('insert into item (id, chat_id, created, text) values (?, ?, ?, ?)')
  const insert = await rate(rows, () => {
    db.exec('begin immediate')
    for (let i = 0; i < rows; i++) {
      const { id, chat_id, created, text } = item(i)
      insertItem.run(id, chat_id, created, text)
    }
    db.exec('commit')
  })
  const selectItem = db.prepare('select * from item where id = ?')
  const read = await median(() =>
    rate(rows, () => {
      for (let i = 0; i < rows; i++) if (selectItem.get(readOrder(i)) === undefined) throw new Error('missing row')
    }),
  )
  db.close()
  return { insert, read }
}

try {
  const raw = await benchNodeSqlite()
  const kysely = await benchKysely()
  const perSecond = (value: number) => `${Math.round(value).toLocaleString('en').padStart(9)} rows/s`
  const line = (label: string, viaKysely: number, direct: number) =>
    console.log(
      `${label.padEnd(40)} ${perSecond(viaKysely)}  vs node:sqlite ${perSecond(direct)}  ratio ${(viaKysely / direct).toFixed(2)}`,
    )
  console.log(
    `node ${process.version}, ${availableParallelism()} cores, SQLite ${process.versions.sqlite}, ` +
      `WAL + synchronous=NORMAL, ${rows.toLocaleString('en')} rows, reads: median of ${readRounds} rounds`,
  )
  line('insert, one transaction (Kysely)', kysely.insert, raw.insert)
  line('point read by primary key (Kysely)', kysely.read, raw.read)
  line('point read, prebuilt SQL (executeQuery)', kysely.readPrebuilt, raw.read)
} finally {
  rmSync(directory, { recursive: true, force: true })
}
