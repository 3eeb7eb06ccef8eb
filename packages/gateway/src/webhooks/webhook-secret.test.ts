import assert from 'node:assert/strict'
import { createDatabase, migrateToLatest } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, until } from '@atrium/platform/testing'
import { startWebhookReceiver, startWebhookWorld, verifySignature } from '../../test/webhooks.ts'
import { gatewayMigrations } from '../db/migrations/index.ts'
import type { GatewayDatabase } from '../db/schema.ts'

forEachDialect('apps made before webhooks existed get a signing secret each', async (t, dialect) => {
  const database = createDatabase<GatewayDatabase>(await createTestDatabaseUrl(t, dialect))
  t.after(() => database.destroy())
  const before = Object.fromEntries(Object.entries(gatewayMigrations).filter(([name]) => name < '0004'))
  await migrateToLatest(database, before)
  // biome-ignore lint/suspicious/noExplicitAny: the apps table as it was before 0004
  const db = database.db as any
  await db.insertInto('apps').values({ id: 1, name: 'Old shop' }).execute()
  await db.insertInto('apps').values({ id: 2, name: 'Older shop' }).execute()

  await migrateToLatest(database, gatewayMigrations)
  const apps = await database.db.selectFrom('apps').select(['id', 'webhook_secret']).orderBy('id').execute()
  assert.equal(apps.length, 2)
  for (const app of apps) assert.match(app.webhook_secret, /^whsec_[A-Za-z0-9_-]{43}$/)
  assert.notEqual(apps[0]!.webhook_secret, apps[1]!.webhook_secret)
})

forEachDialect(
  '`atrium webhooks secret` prints a new secret that the next deliveries are signed with',
  async (t, dialect) => {
    const world = await startWebhookWorld(t, dialect)
    const hook = await startWebhookReceiver(t)
    const shop = await world.appWith(hook.url)
    await shop.send('signed with the first secret')
    await until(() => hook.accepted().length === 1, 'the first delivery')

    const rotated = await world.atrium('webhooks', 'secret', String(shop.app.id), '--json')
    assert.equal(rotated.code, 0, rotated.stderr)
    const { webhookSecret } = JSON.parse(rotated.stdout)
    assert.match(webhookSecret, /^whsec_/)
    assert.notEqual(webhookSecret, shop.app.webhook_secret)
    const listed = await world.atrium('app', 'list', '--json')
    assert.ok(!listed.stdout.includes(webhookSecret), 'lists never show the signing secret')
    assert.ok(!listed.stdout.includes(shop.app.webhook_secret))

    // The sending gateway re-reads the apps every Webhooks.ReloadMs. One reading that sees an app
    // made after the rotation also sees the new secret: once that app's lane has saved its cursor,
    // the shop's lane signs with the new secret.
    const later = await world.appWith(hook.url)
    await until(
      async () => (await world.deliveries().cursor(later.app.id, 'chat')) !== undefined,
      'a lane for the app made after the rotation',
    )
    await shop.send('signed with the second secret')
    await until(() => hook.accepted().length === 2, 'the second delivery')
    const [first, second] = hook.accepted()
    assert.ok(verifySignature(shop.app.webhook_secret, first!.raw, first!.signature))
    assert.ok(verifySignature(webhookSecret, second!.raw, second!.signature))
    assert.ok(
      !verifySignature(shop.app.webhook_secret, second!.raw, second!.signature),
      'the old secret no longer signs',
    )

    const unknown = await world.atrium('webhooks', 'secret', '12345')
    assert.equal(unknown.code, 2)
    assert.match(unknown.stderr, /no app 12345/)
  },
)
