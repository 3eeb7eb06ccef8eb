import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTimetickGenerator, errorCodes, migrateToLatest } from '@atrium/platform'
import { forEachDialect, openTestDatabase } from '@atrium/platform/testing'
import { gatewayMigrations } from '../db/migrations/index.ts'
import type { GatewayDatabase } from '../db/schema.ts'
import { createApps, normalizeOrigin } from './apps.repository.ts'

forEachDialect(
  'rotateSecret replaces the app secret: the new one signs in, the old one no more',
  async (t, dialect) => {
    const database = await openTestDatabase<GatewayDatabase>(t, dialect)
    await migrateToLatest(database, gatewayMigrations)
    const apps = createApps(database.db, createTimetickGenerator({ node: 1 }))
    const { app, secret } = await apps.create({ name: 'Shop', owner: 1 })
    const other = await apps.create({ name: 'Other', owner: 1 })

    const rotated = await apps.rotateSecret(app.id)
    assert.ok(rotated && rotated !== secret)
    assert.equal((await apps.verify(app.id, rotated))?.id, app.id)
    assert.equal(await apps.verify(app.id, secret), undefined)
    // Only the hash is stored, and other apps keep theirs.
    const row = (await apps.get(app.id))!
    assert.ok(!JSON.stringify(row).includes(rotated))
    assert.ok(row.timetick_update > app.timetick_update)
    assert.ok(await apps.verify(other.app.id, other.secret))
    assert.equal(await apps.rotateSecret(12345), undefined)
  },
)

test('normalizeOrigin keeps scheme, host and port exactly as browsers send them and refuses anything else', () => {
  assert.equal(normalizeOrigin('https://shop.example/'), 'https://shop.example')
  assert.equal(normalizeOrigin('http://localhost:5173'), 'http://localhost:5173')
  for (const bad of [
    'https://shop.example/x',
    'ftp://shop.example',
    'shop.example',
    'https://a:b@shop.example',
    'https://shop.example:443',
    '',
  ]) {
    assert.throws(
      () => normalizeOrigin(bad),
      (error: { code: number }) => error.code === errorCodes.InvalidRequest.code,
      bad,
    )
  }
})
