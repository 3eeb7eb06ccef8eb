import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type Kysely, sql } from 'kysely'
import { forEachDialect, openTestDatabase } from '../testing/databases.ts'
import { compiledOnce } from './compiled-once.ts'
import { createDatabase } from './database.ts'

interface DB {
  note: { id: number; owner: number; body: string; flags: number }
}

forEachDialect('a query compiled once runs with each call’s values and keeps its own', async (t, dialect) => {
  const database = await openTestDatabase<DB>(t, dialect)
  const { db } = database
  await sql`create table note (id integer primary key, owner integer not null, body text not null, flags integer not null)`.execute(
    db,
  )
  let builds = 0
  const insert = compiledOnce(
    ['id', 'owner', 'body'],
    (from: Kysely<DB>, note: { id: number; owner: number; body: string }) => {
      builds++
      // flags is the query's own value: 7 in every row, whatever the arguments.
      return from.insertInto('note').values({ ...note, flags: 7 })
    },
  )
  const ownedBy = compiledOnce(['owner', 'limit'], (from: Kysely<DB>, a: { owner: number; limit: number }) =>
    from.selectFrom('note').selectAll().where('owner', '=', a.owner).orderBy('id').limit(a.limit),
  )
  await insert(db, { id: 1, owner: 10, body: 'first' })
  // Inside a transaction, the same compiled query (the transaction shares the database's adapter).
  await db.transaction().execute(async (trx) => {
    await insert(trx, { id: 2, owner: 20, body: "it's ‘odd’ 字" })
    await insert(trx, { id: 3, owner: 10, body: 'third' })
  })
  assert.equal(builds, 1)
  assert.deepEqual((await ownedBy(db, { owner: 10, limit: 5 })).rows, [
    { id: 1, owner: 10, body: 'first', flags: 7 },
    { id: 3, owner: 10, body: 'third', flags: 7 },
  ])
  assert.deepEqual((await ownedBy(db, { owner: 10, limit: 1 })).rows, [{ id: 1, owner: 10, body: 'first', flags: 7 }])
  assert.deepEqual((await ownedBy(db, { owner: 20, limit: 5 })).rows, [
    { id: 2, owner: 20, body: "it's ‘odd’ 字", flags: 7 },
  ])
  const update = compiledOnce(['body', 'id'], (from: Kysely<DB>, a: { body: string; id: number }) =>
    from.updateTable('note').set({ body: a.body }).where('id', '=', a.id),
  )
  assert.equal(Number((await update(db, { body: 'changed', id: 3 })).numAffectedRows), 1)
  assert.equal(Number((await update(db, { body: 'changed', id: 99 })).numAffectedRows), 0)
})

test('an argument that shapes the query rather than being one of its values is refused when it compiles', async (t) => {
  const database = createDatabase<DB>('sqlite::memory:')
  t.after(() => database.destroy())
  const unused = compiledOnce(['owner', 'body'], (from: Kysely<DB>, a: { owner: number; body: string }) =>
    from.selectFrom('note').selectAll().where('owner', '=', a.owner),
  )
  assert.throws(() => unused(database.db, { owner: 1, body: 'x' }), /body is not a value of the query/)
  const inText = compiledOnce(['column'], (from: Kysely<DB>, a: { column: string }) =>
    from.selectFrom('note').select(sql.ref(a.column).as('picked')),
  )
  assert.throws(() => inText(database.db, { column: 'body' }), /column is not a value of the query/)
})

test('each database compiles its own copy: a query made for SQLite runs on another SQLite database', async (t) => {
  const first = createDatabase<DB>('sqlite::memory:')
  const second = createDatabase<DB>('sqlite::memory:')
  t.after(() => Promise.all([first.destroy(), second.destroy()]))
  let builds = 0
  const count = compiledOnce(['owner'], (from: Kysely<DB>, a: { owner: number }) => {
    builds++
    return from
      .selectFrom('note')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('owner', '=', a.owner)
  })
  for (const { db } of [first, second]) {
    await sql`create table note (id integer primary key, owner integer not null, body text not null, flags integer not null)`.execute(
      db,
    )
    await db.insertInto('note').values({ id: 1, owner: 5, body: 'b', flags: 0 }).execute()
    assert.deepEqual((await count(db, { owner: 5 })).rows, [{ n: 1 }])
  }
  assert.equal(builds, 2)
})
