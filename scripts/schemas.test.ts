import assert from 'node:assert/strict'
import { chatMigrations } from '@atrium/chat'
import { type Migrations, migrateToLatest } from '@atrium/platform'
import { forEachDialect, listNullableColumns, openTestDatabase } from '@atrium/platform/testing'

// Every module's schema, migrated from empty: the spec allows no NULL fields anywhere.
const modules: [string, Migrations][] = [['chat', chatMigrations]]

for (const [name, migrations] of modules) {
  forEachDialect(`the ${name} schema migrates from empty, twice, and has no nullable column`, async (t, dialect) => {
    const database = await openTestDatabase(t, dialect)
    const applied = await migrateToLatest(database, migrations)
    assert.deepEqual(applied, Object.keys(migrations).sort())
    assert.deepEqual(await migrateToLatest(database, migrations), [], 'a second run applies nothing')
    assert.deepEqual(await listNullableColumns(database), [])
  })
}
