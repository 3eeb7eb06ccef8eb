import assert from 'node:assert/strict'
import { test } from 'node:test'
import { BOT_TOKEN, messageUpdate, startBotApi, WEBHOOK_SECRET } from '../../../chat/test/telegram-bot-api.ts'
import { checkAccessibility } from './accessibility.ts'
import { launchBrowser, openPage, screenshot, signInByEmail, startSystem } from './system.ts'

test('the account page links Telegram by its deep link, turns notifications on, and unlinks', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const api = await startBotApi(t)
  const system = await startSystem(
    t,
    'sqlite',
    {
      Proxy: {
        Routes: [
          { Prefix: '/msg/', Upstream: 'chat', Flags: ['AppAuthAndCORS'] },
          { Prefix: '/telegram/', Upstream: 'chat' },
        ],
      },
    },
    undefined,
    {
      TelegramBot: BOT_TOKEN,
      Telegram: {
        ApiRoot: api.root,
        Updates: 'webhook',
        WebhookUrl: 'https://example.test/telegram/v1/webhook',
        WebhookSecret: WEBHOOK_SECRET,
      },
    },
  )
  const { page, errors } = await openPage(browser)
  await page.goto(`${system.url}/chat/sign-in`)
  await signInByEmail(page, system, 'tess@example.com')
  await page.goto(`${system.url}/chat/account`)
  const panel = page.getByRole('region', { name: 'Telegram' })
  await panel.getByRole('button', { name: 'Link Telegram' }).click()

  const link = panel.getByRole('link', { name: /^https:\/\/t\.me\/atrium_test_bot\?start=/ })
  await link.waitFor()
  const url = (await link.getAttribute('href')) ?? ''
  assert.equal(await link.textContent(), url)
  await screenshot(page, 'account-telegram-link')
  const token = new URL(url).searchParams.get('start') ?? ''
  // Telegram delivers the user's Start to the webhook, through the gateway like any update.
  const user = { id: 5_550_001, first_name: 'Tess', username: 'tess' }
  const delivered = await fetch(`${system.url}/telegram/v1/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Telegram-Bot-Api-Secret-Token': WEBHOOK_SECRET },
    body: JSON.stringify(messageUpdate(user, `/start ${token}`)),
  })
  assert.equal(delivered.status, 200)

  // The page notices by itself.
  await panel.getByText('Linked to Tess (@tess).', { exact: false }).waitFor()
  await panel.getByRole('status').filter({ hasText: 'Telegram linked: Tess (@tess).' }).waitFor()
  const toggle = panel.getByRole('checkbox', { name: 'Send chat notifications to Telegram' })
  assert.equal(await toggle.isChecked(), false)
  await toggle.check()
  await page.reload()
  assert.equal(await panel.getByRole('checkbox', { name: 'Send chat notifications to Telegram' }).isChecked(), true)
  await screenshot(page, 'account-telegram-linked')
  await checkAccessibility(page, 'account-telegram')

  await panel.getByRole('button', { name: 'Unlink Telegram' }).click()
  await panel.getByRole('status').filter({ hasText: 'Telegram is unlinked.' }).waitFor()
  await panel.getByRole('button', { name: 'Link Telegram' }).waitFor()
  assert.deepEqual(errors, [])
})
