import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { createTestDatabaseUrl, forEachDialect, onlyWithPostgres, openTestDatabase } from '../testing/databases.ts'
import { columnType, notNullDefault, primaryKey } from './columns.ts'
import { createDatabase, type DatabaseDialect } from './database.ts'
import { appliedMigrations, type Migrations, migrateToLatest } from './migrator.ts'

interface Counted {
  migrations: Migrations
  runs: string[]
}

function countedMigrations(): Counted {
  const runs: string[] = []
  return {
    runs,
    migrations: {
      '0001-initial': {
        async up(db, dialect) {
          runs.push(`0001 on ${dialect}`)
          await db.schema
            .createTable('chat')
            .addColumn('id', columnType.id, primaryKey())
            .addColumn('title', columnType.text, notNullDefault(''))
            .execute()
        },
      },
      '0002-chat-created': {
        async up(db) {
          runs.push('0002')
          await db.schema.alterTable('chat').addColumn('created', columnType.time, notNullDefault(0)).execute()
        },
      },
    },
  }
}

forEachDialect('migrations apply once, in name order, and a second run does nothing', async (t, dialect) => {
  const database = await openTestDatabase(t, dialect)
  const { migrations, runs } = countedMigrations()
  assert.deepEqual(await migrateToLatest(database, migrations), ['0001-initial', '0002-chat-created'])
  assert.deepEqual(await migrateToLatest(database, migrations), [])
  assert.deepEqual(runs, [`0001 on ${dialect}`, '0002'])
  await sql`insert into chat (id) values (1)`.execute(database.db)
  const { rows } = await sql`select id, title, created from chat`.execute(database.db)
  assert.deepEqual(rows, [{ id: 1, title: '', created: 0 }])
})

forEachDialect('a failing migration is named in the error and leaves no partial change', async (t, dialect) => {
  const database = await openTestDatabase(t, dialect)
  const { migrations } = countedMigrations()
  await migrateToLatest(database, { '0001-initial': migrations['0001-initial']! })
  const failing: Migrations = {
    ...migrations,
    '0003-broken': {
      async up(db) {
        await db.schema.createTable('half_done').addColumn('x', columnType.integer, notNullDefault(0)).execute()
        await sql`select * from no_such_table`.execute(db)
      },
    },
  }
  await assert.rejects(migrateToLatest(database, failing), /^Error: migration 0003-broken failed: .*no_such_table/)
  const tables = await database.db.introspection.getTables()
  assert.deepEqual(tables.map((table) => table.name).sort(), ['chat'])
  const chat = tables.find((table) => table.name === 'chat')
  assert.deepEqual(
    chat?.columns.map((column) => column.name),
    ['id', 'title'],
  )
})

test('migration names must be NNNN-kebab-words', async (t) => {
  const database = await openTestDatabase(t, 'sqlite')
  const up = async () => {}
  await assert.rejects(
    migrateToLatest(database, { '0001-initial': { up }, '2-Second': { up }, '0003_third': { up } }),
    /invalid migration names 2-Second, 0003_third: use NNNN-kebab-words/,
  )
})

test(
  'two instances migrating one PostgreSQL schema at once apply each migration once',
  onlyWithPostgres(),
  async (t) => {
    const url = await createTestDatabaseUrl(t, 'postgres')
    const instances = [createDatabase(url), createDatabase(url), createDatabase(url)]
    t.after(() => Promise.all(instances.map((instance) => instance.destroy())))
    const ran: string[] = []
    const migrations: Migrations = {
      '0001-initial': {
        async up(db, dialect: DatabaseDialect) {
          ran.push(dialect)
          await db.schema.createTable('once').addColumn('x', columnType.integer, notNullDefault(0)).execute()
          // Long enough for the other instances to be waiting on the lock.
          await sql`select pg_sleep(0.2)`.execute(db)
        },
      },
    }
    const applied = await Promise.all(instances.map((instance) => migrateToLatest(instance, migrations)))
    assert.deepEqual(ran, ['postgres'])
    assert.deepEqual(applied.flat(), ['0001-initial'])
  },
)

test('each PostgreSQL schema keeps its own migration history', onlyWithPostgres(), async (t) => {
  const first = await openTestDatabase(t, 'postgres')
  const second = await openTestDatabase(t, 'postgres')
  assert.deepEqual(await migrateToLatest(first, countedMigrations().migrations), ['0001-initial', '0002-chat-created'])
  assert.deepEqual(await migrateToLatest(second, countedMigrations().migrations), ['0001-initial', '0002-chat-created'])
})

test('a ?schema= that does not exist is named when migrating', onlyWithPostgres(), async (t) => {
  const url = new URL(await createTestDatabaseUrl(t, 'postgres'))
  url.searchParams.set('schema', 'no_such_schema_here')
  const database = createDatabase(url.toString())
  t.after(() => database.destroy())
  await assert.rejects(
    migrateToLatest(database, countedMigrations().migrations),
    /no schema has been selected to create in/,
  )
})

forEachDialect(
  'an older build runs on a schema a newer build migrated, and hears which migrations it lacks',
  async (t, dialect) => {
    const database = await openTestDatabase(t, dialect)
    const { migrations } = countedMigrations()
    const newer: Migrations = {
      ...migrations,
      '0003-chat-topic': {
        async up(db) {
          await db.schema.alterTable('chat').addColumn('topic', columnType.text, notNullDefault('')).execute()
        },
      },
    }
    assert.deepEqual(await migrateToLatest(database, newer), ['0001-initial', '0002-chat-created', '0003-chat-topic'])
    assert.deepEqual(await appliedMigrations(database), ['0001-initial', '0002-chat-created', '0003-chat-topic'])

    const reported: string[][] = []
    const older = await migrateToLatest(database, migrations, { onNewerSchema: (names) => reported.push(names) })
    assert.deepEqual(older, [])
    assert.deepEqual(reported, [['0003-chat-topic']])
    // The older build's writes still work: the added column has a default.
    await sql`insert into chat (id, title) values (1, 'kept')`.execute(database.db)
    const { rows } = await sql`select title, topic from chat`.execute(database.db)
    assert.deepEqual(rows, [{ title: 'kept', topic: '' }])
    // And the newer build finds nothing left to do.
    assert.deepEqual(await migrateToLatest(database, newer), [])
  },
)

forEachDialect('a database migrated by builds of another history is refused by name', async (t, dialect) => {
  const database = await openTestDatabase(t, dialect)
  const { migrations } = countedMigrations()
  await migrateToLatest(database, {
    '0001-initial': migrations['0001-initial']!,
    '0001-other-branch': { up: async () => {} },
  })
  await assert.rejects(
    migrateToLatest(database, migrations),
    /does not know that are older than its newest \(0002-chat-created\): 0001-other-branch/,
  )
})

test('a new database has no applied migrations', async (t) => {
  const database = await openTestDatabase(t, 'sqlite')
  assert.deepEqual(await appliedMigrations(database), [])
})
