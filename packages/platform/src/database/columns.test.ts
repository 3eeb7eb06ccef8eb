import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { forEachDialect, listNullableColumns, openTestDatabase } from '../testing/databases.ts'
import { columnType, notNullDefault, primaryKey, readBool, writeBool } from './columns.ts'
import { migrateToLatest } from './migrator.ts'

forEachDialect('a schema built with the column helpers has no nullable column', async (t, dialect) => {
  const database = await openTestDatabase(t, dialect)
  await migrateToLatest(database, {
    '0001-initial': {
      async up(db) {
        await db.schema
          .createTable('message')
          .addColumn('id', columnType.id, primaryKey())
          .addColumn('chat_id', columnType.id, notNullDefault(0))
          .addColumn('pinned', columnType.bool, notNullDefault(false))
          .addColumn('timetick_update', columnType.time, notNullDefault(0))
          .addColumn('size', columnType.bigInteger, notNullDefault(0))
          .addColumn('kind', columnType.integer, notNullDefault(0))
          .addColumn('rating', columnType.double, notNullDefault(0.5))
          .addColumn('text', columnType.text, notNullDefault(''))
          .addColumn('meta', columnType.json, notNullDefault('{}'))
          .execute()
        await db.schema.createView('pinned_message').as(sql`select id from message where pinned = 1`).execute()
        // Search indexes are derived data: their virtual and shadow tables are not rows the spec describes.
        if (dialect === 'sqlite') await sql`create virtual table message_search using fts5(text)`.execute(db)
      },
    },
  })
  assert.deepEqual(await listNullableColumns(database), [])

  await sql`insert into message (id) values (1)`.execute(database.db)
  const { rows } = await sql`select * from message`.execute(database.db)
  assert.deepEqual(rows, [
    { id: 1, chat_id: 0, pinned: 0, timetick_update: 0, size: 0, kind: 0, rating: 0.5, text: '', meta: '{}' },
  ])
})

forEachDialect('listNullableColumns names every column that accepts NULL', async (t, dialect) => {
  const database = await openTestDatabase(t, dialect)
  await sql`create table a (id bigint primary key, note text, ok text not null)`.execute(database.db)
  await sql`create table b (key text not null, value integer)`.execute(database.db)
  // SQLite lets a non-INTEGER primary key hold NULL (a legacy quirk); PostgreSQL does not.
  const expected = dialect === 'sqlite' ? ['a.id', 'a.note', 'b.value'] : ['a.note', 'b.value']
  assert.deepEqual(await listNullableColumns(database), expected)
})

test('an INTEGER PRIMARY KEY is the SQLite rowid and never NULL', async (t) => {
  const database = await openTestDatabase(t, 'sqlite')
  await sql`create table r (id integer primary key, other integer)`.execute(database.db)
  assert.deepEqual(await listNullableColumns(database), ['r.other'])
})

test('booleans convert to and from their 0/1 column values', () => {
  assert.equal(writeBool(true), 1)
  assert.equal(writeBool(false), 0)
  assert.equal(readBool(1), true)
  assert.equal(readBool(0), false)
})
