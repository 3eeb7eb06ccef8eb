import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createDatabase, timetickAt } from '@atrium/platform'
import { createTestDatabaseUrl, until } from '@atrium/platform/testing'
import type { ChatDatabase } from '../../../chat/src/db/schema.ts'
import { checkAccessibility } from './accessibility.ts'
import { launchBrowser, openPage, signInByEmail, startSystem } from './system.ts'

test('an operator opens /ChatAdmin/BotWidgets through the gateway; without the admin scope it is refused', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const gatewayDb = await createTestDatabaseUrl(t, 'sqlite')
  const system = await startSystem(t, 'sqlite', {
    GatewayDB: gatewayDb,
    Proxy: {
      Routes: [
        { Prefix: '/msg/', Upstream: 'chat', Flags: ['AppAuthAndCORS'] },
        { Prefix: '/ChatAdmin/', Upstream: 'chat', Flags: ['RequireSession'] },
      ],
    },
  })
  const chatDb = createDatabase<ChatDatabase>(system.chat.database)
  t.after(() => chatDb.destroy())

  const { page, errors } = await openPage(browser, { width: 1280, height: 900 })
  await page.goto(`${system.url}/chat/sign-in`)
  const crmId = await signInByEmail(page, system, 'olive@example.com')
  // A widget an operator defined earlier, shown with who changed it last.
  await chatDb.db
    .insertInto('telegram_widgets')
    .values({
      name: 'support_queue',
      title: 'Support queue',
      template: 'Waiting: {waiting_support_chats}\nEscalated: {open_escalations}',
      scope: 'support',
      refresh_seconds: 30,
      updated_by: Number(crmId),
      timetick_update: timetickAt(Date.now()),
    })
    .execute()
  await page.goto(`${system.url}/ChatAdmin/BotWidgets`)
  await page.getByRole('heading', { name: 'Not allowed' }).waitFor()
  assert.match((await page.locator('main').textContent()) ?? '', /You need the admin scope/)

  // An operator grants Olive the admin scope; the gateway trusts its cached scopes for 5 s.
  const gateway = createDatabase<{ users: { crm_id: number; scopes: string } }>(gatewayDb)
  t.after(() => gateway.destroy())
  await gateway.db.updateTable('users').set({ scopes: 'admin' }).where('crm_id', '=', Number(crmId)).execute()
  await until(
    async () => {
      await page.reload()
      return (await page.getByRole('heading', { name: 'Bot widgets' }).count()) > 0
    },
    'the page for the operator',
    15_000,
  )
  await page.getByRole('cell', { name: 'support_queue', exact: true }).waitFor()
  await page.getByRole('cell', { name: /^User \d{4}/ }).waitFor()
  await page.getByLabel('Template: text with {stat_name} placeholders').waitFor()
  // Loaded under its strict CSP without a console error (the refusals above log their 403s): the
  // one stylesheet is allowed.
  assert.deepEqual(
    errors.filter((error) => !error.includes('status of 403')),
    [],
  )

  // axe is a script, which the page's CSP refuses by design; it runs in a context that bypasses it.
  const audit = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 1900 } })
  t.after(() => audit.close())
  await audit.addCookies(await page.context().cookies())
  const audited = await audit.newPage()
  await audited.goto(`${system.url}/ChatAdmin/BotWidgets`)
  await audited.getByRole('heading', { name: 'Bot widgets' }).waitFor()
  await checkAccessibility(audited, 'chat-admin-bot-widgets')
})
