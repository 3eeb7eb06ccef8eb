import assert from 'node:assert/strict'
import test from 'node:test'
import { errorCodes } from '@atrium/platform'
import { listen, until } from '@atrium/platform/testing'
import { createChatClient, SERVICE_SECRET } from '../../test/support.ts'
import { BOT_TOKEN, messageUpdate, WEBHOOK_SECRET } from '../../test/telegram-bot-api.ts'
import { startTelegramChat, startTokenOf } from '../../test/telegram-chat.ts'
import { buildChat } from '../app.ts'
import { loadChatConfig } from '../config.ts'

const ADA = { id: 5_550_001, first_name: 'Ada' }

test('webhook mode registers the webhook with its secret on the bot token path', async (t) => {
  const { api } = await startTelegramChat(t, 'sqlite')

  await until(() => api.webhook() !== '', 'setWebhook')
  const [registered] = api.callsOf('setWebhook')
  assert.deepEqual(registered?.params, {
    url: 'https://example.test/telegram/v1/webhook',
    secret_token: WEBHOOK_SECRET,
    allowed_updates: ['message', 'my_chat_member'],
  })
  assert.equal(api.webhook(), 'https://example.test/telegram/v1/webhook')
  assert.ok(api.calls.every((call) => call.token === BOT_TOKEN))
  assert.equal(api.callsOf('getUpdates').length, 0)
})

test('an update with the right secret is handled; a missing or wrong one is refused before anything', async (t) => {
  const { chat, update, sentTo } = await startTelegramChat(t, 'sqlite')
  await chat.register([1, 'Alice'])
  const token = startTokenOf((await chat.user(1).ok('link_telegram')).url)
  const start = messageUpdate(ADA, `/start ${token}`)

  for (const secret of [
    null,
    '',
    WEBHOOK_SECRET.slice(0, -1),
    `${WEBHOOK_SECRET.slice(0, -1)}X`,
    `${WEBHOOK_SECRET}x`,
    WEBHOOK_SECRET.toUpperCase(),
  ]) {
    const refused = await update(start, secret)
    assert.equal(refused.status, 401, String(secret))
    assert.equal(refused.error?.code, errorCodes.TelegramWebhookRefused.code)
  }
  // Refused before the body is read: a malformed body with a wrong secret is still 401, not 400.
  const malformed = await update({ nonsense: true }, 'wrong-secret')
  assert.equal(malformed.status, 401)
  assert.deepEqual(sentTo(ADA.id), [])
  assert.equal((await chat.user(1).read('get_telegram_link')).linked, false)

  // An oversized body: refused for the secret unread, and for its size with the right secret.
  const huge = { update_id: 1, padding: 'x'.repeat(2 * 1024 * 1024) }
  assert.equal((await update(huge, 'wrong-secret')).status, 401)
  assert.equal((await update(huge)).status, 413)

  const handled = await update(start)
  assert.equal(handled.status, 200, JSON.stringify(handled.error))
  assert.equal((await chat.user(1).read('get_telegram_link')).linked, true)
  assert.equal((await update({ nonsense: true })).status, 400)
})

test('the webhook is reached only with the gateway hop signature', async (t) => {
  const { chat } = await startTelegramChat(t, 'sqlite')
  const response = await fetch(`${chat.base}/telegram/v1/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': WEBHOOK_SECRET },
    body: JSON.stringify(messageUpdate(ADA, '/help')),
  })
  assert.equal(response.status, 401)
})

test('long polling receives updates, and stops cleanly confirming the last one', async (t) => {
  const { api, chat, sentTo, close } = await startTelegramChat(t, 'sqlite', { telegram: { Updates: 'polling' } })
  await until(() => api.callsOf('getUpdates').length > 0, 'the first getUpdates')
  assert.equal(api.callsOf('deleteWebhook').length, 1)
  assert.equal(api.callsOf('setWebhook').length, 0)
  // No webhook route in polling mode.
  assert.equal((await chat.call('POST', '/telegram/v1/webhook', {}, {})).status, 404)

  await chat.register([1, 'Alice'])
  const token = startTokenOf((await chat.user(1).ok('link_telegram')).url)
  const pushed = api.push(messageUpdate(ADA, `/start ${token}`))
  await until(() => sentTo(ADA.id).length > 0, 'the reply to /start')
  assert.match(sentTo(ADA.id)[0] ?? '', /now linked/)
  assert.equal((await chat.user(1).read('get_telegram_link')).linked, true)
  const polls = api.callsOf('getUpdates')
  assert.deepEqual(polls[0]?.params.allowed_updates, ['message', 'my_chat_member'])
  assert.ok(polls.every((call) => Number(call.params.timeout) > 0 && call.token === BOT_TOKEN))

  // Closing the module confirms the handled update (offset past it), so it is not delivered again.
  const before = api.callsOf('getUpdates').length
  await close()
  const last = api.callsOf('getUpdates').slice(before).at(-1)
  assert.equal(last?.params.offset, pushed.update_id + 1)
})

test('a wrong bot token is reported as Telegram being unavailable', async (t) => {
  const started = await startTelegramChat(t, 'sqlite', { telegram: { Updates: 'off' } })
  const config = loadChatConfig(
    {
      ChatDB: 'sqlite::memory:',
      ServiceSecret: SERVICE_SECRET,
      TelegramBot: '7012345678:AAF-wrong_token-0123456789abcdefghijk',
      Telegram: { ApiRoot: started.api.root, Updates: 'off' },
    },
    {},
  )
  const chat = createChatClient(await listen(t, await buildChat(config, { logger: false })))
  await chat.register([1, 'Alice'])
  const link = await chat.user(1).post('link_telegram')
  assert.equal(link.status, 502)
  assert.equal(link.error?.code, errorCodes.TelegramUnavailable.code)
  assert.equal(started.api.calls.at(-1)?.method, 'getMe')
})

test('settings: a malformed token, and webhook mode without https URL or secret, are refused at start', () => {
  assert.throws(
    () => loadChatConfig({ TelegramBot: 'not-a-token', ServiceSecret: SERVICE_SECRET }, {}),
    /TelegramBot: must be a bot token/,
  )
  assert.throws(
    () =>
      loadChatConfig(
        {
          TelegramBot: BOT_TOKEN,
          ServiceSecret: SERVICE_SECRET,
          Telegram: { Updates: 'webhook', WebhookUrl: 'http://example.test/x', WebhookSecret: 'short' },
        },
        {},
      ),
    (error: Error) =>
      /Telegram.WebhookUrl: an https URL/.test(error.message) &&
      /Telegram.WebhookSecret: at least 16/.test(error.message),
  )
  assert.throws(
    () => loadChatConfig({ ServiceSecret: SERVICE_SECRET, Telegram: { ApiRoot: 'https://api.telegram.org/' } }, {}),
    /ApiRoot/,
  )
})
