import assert from 'node:assert/strict'
import { errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { SERVICE_SECRET } from '../../../chat/test/support.ts'
import { messageUpdate, WEBHOOK_SECRET } from '../../../chat/test/telegram-bot-api.ts'
import { startTelegramChat, startTokenOf } from '../../../chat/test/telegram-chat.ts'
import { startGateway } from '../../test/support.ts'

forEachDialect('Telegram reaches the bot webhook through a gateway route without a session', async (t, dialect) => {
  const { chat, sentTo } = await startTelegramChat(t, dialect)
  // The gateway signs its hops with the chat module's secret, which the test's chat client also uses.
  const gateway = await startGateway(t, dialect, {
    settings: { Modules: { chat: chat.base }, ServiceSecret: SERVICE_SECRET },
  })
  await gateway.store.routes.add({ prefix: '/telegram/', upstream: 'chat', flags: 0 })
  const user = { id: 5_550_001, first_name: 'Ada' }
  await chat.register([1, 'Alice'])
  const token = startTokenOf((await chat.user(1).ok('link_telegram')).url)
  // As Telegram posts: no cookie, no credentials, only the secret header.
  const post = (secret: string) =>
    fetch(`${gateway.url}/telegram/v1/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Telegram-Bot-Api-Secret-Token': secret },
      body: JSON.stringify(messageUpdate(user, `/start ${token}`)),
    })

  const refused = await post(`${WEBHOOK_SECRET.slice(0, -1)}?`)
  assert.equal(refused.status, 401)
  assert.equal((await json(refused)).error.code, errorCodes.TelegramWebhookRefused.code)
  assert.deepEqual(sentTo(user.id), [])

  const accepted = await post(WEBHOOK_SECRET)
  assert.equal(accepted.status, 200, JSON.stringify(await accepted.clone().json()))
  assert.match(sentTo(user.id)[0] ?? '', /now linked/)
  assert.equal((await chat.user(1).read('get_telegram_link')).telegram_name, 'Ada')
})
