import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { CommunicationChannel, type DatabaseDialect, errorCodes } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { startSmtpPeer } from '../../test/smtp-peer.ts'
import { messageUpdate } from '../../test/telegram-bot-api.ts'
import { startTelegramChat, startTokenOf } from '../../test/telegram-chat.ts'

const ADA = { id: 5_550_001, first_name: 'Ada' }

/** The chat module with the bot and SMTP, Alice (1) linked to Ada's Telegram. */
async function withLinkedAlice(t: TestContext, dialect: DatabaseDialect) {
  const smtp = { Username: 'u', Password: 'p-smtp-7c1e' }
  const peer = await startSmtpPeer(t, { username: smtp.Username, password: smtp.Password })
  const started = await startTelegramChat(t, dialect, {
    settings: { SmtpSettings: { Host: '127.0.0.1', Port: peer.port, ...smtp, From: 'Atrium <no-reply@atrium.test>' } },
  })
  const { chat, update } = started
  await chat.register([1, 'Alice'], [2, 'Bob'])
  await update(messageUpdate(ADA, `/start ${startTokenOf((await chat.user(1).ok('link_telegram')).url)}`))
  assert.equal((await chat.user(1).read('get_telegram_link')).linked, true)
  const send = (operation: string, body: object) => started.chat.call('POST', `/private/v1/${operation}`, {}, body)
  return { ...started, peer, send }
}

forEachDialect(
  'SendToTelegram by crm_id sends the text to the linked chat with the fields asked for',
  async (t, dialect) => {
    const { api, send } = await withLinkedAlice(t, dialect)
    const before = api.callsOf('sendMessage').length

    const sent = await send('SendToTelegram', {
      crm_id: '1',
      text: '<b>Order 42</b> has shipped',
      parse_mode: 'HTML',
      disable_link_preview: true,
    })

    assert.equal(sent.status, 200, JSON.stringify(sent.error))
    const calls = api.callsOf('sendMessage').slice(before)
    assert.equal(calls.length, 1)
    assert.match(calls[0]!.contentType, /^application\/json/)
    assert.deepEqual(calls[0]!.params, {
      chat_id: ADA.id,
      text: '<b>Order 42</b> has shipped',
      parse_mode: 'HTML',
      link_preview_options: { is_disabled: true },
    })
    assert.equal(sent.result.to, '****001')
    assert.match(sent.result.message_id, /^[0-9]+$/)
  },
)

forEachDialect(
  'SendToTelegram to a chat id sends plain text; bad requests are refused before Telegram',
  async (t, dialect) => {
    const { api, send } = await withLinkedAlice(t, dialect)
    const sent = await send('SendToTelegram', { telegram_chat_id: '-100123', text: 'plain *text*' })
    assert.equal(sent.status, 200, JSON.stringify(sent.error))
    assert.deepEqual(api.callsOf('sendMessage').at(-1)?.params, { chat_id: -100123, text: 'plain *text*' })
    const count = api.callsOf('sendMessage').length

    for (const [body, why] of [
      [{ crm_id: '1', telegram_chat_id: '5', text: 'x' }, 'both destinations'],
      [{ text: 'x' }, 'no destination'],
      [{ crm_id: '1', text: '' }, 'empty text'],
      [{ crm_id: '1', text: 'x'.repeat(4097) }, 'over 4096 characters'],
      [{ crm_id: '1', text: 'a\u0000b' }, 'NUL'],
      [{ crm_id: '1', text: 'x', parse_mode: 'Markdown' }, 'unknown parse mode'],
      [{ telegram_chat_id: '9999999999999999', text: 'x' }, 'unsafe chat id'],
      [{ crm_id: '1', text: 'x', extra: 1 }, 'unknown field'],
    ] as const) {
      const refused = await send('SendToTelegram', body)
      assert.equal(refused.status, 400, why)
      assert.equal(refused.error?.code, errorCodes.InvalidRequest.code, why)
    }
    assert.equal(api.callsOf('sendMessage').length, count)
    assert.equal(
      (await send('SendToTelegram', { crm_id: '2', text: 'x' })).error?.code,
      errorCodes.TelegramNotLinked.code,
    )
  },
)

forEachDialect('a bot blocked by the user answers TelegramBlocked and removes the link', async (t, dialect) => {
  const { api, chat, send } = await withLinkedAlice(t, dialect)
  api.blocked.add(ADA.id)

  const refused = await send('SendToTelegram', { crm_id: '1', text: 'hello' })

  assert.equal(refused.status, 410)
  assert.equal(refused.error?.code, errorCodes.TelegramBlocked.code)
  assert.equal((await chat.user(1).read('get_telegram_link')).linked, false)
})

forEachDialect(
  'Telegram refusing the text, or not answering, maps to clear errors and keeps the link',
  async (t, dialect) => {
    const { api, chat, send } = await withLinkedAlice(t, dialect)

    const unparsable = await send('SendToTelegram', { crm_id: '1', text: '<blink>x</blink>', parse_mode: 'HTML' })
    assert.equal(unparsable.status, 422)
    assert.equal(unparsable.error?.code, errorCodes.TelegramRejected.code)
    assert.match(unparsable.error?.message ?? '', /can't parse entities/)

    api.state.retryAfter = 7
    const slowDown = await send('SendToTelegram', { crm_id: '1', text: 'x' })
    assert.equal(slowDown.status, 502)
    assert.equal(slowDown.error?.code, errorCodes.TelegramUnavailable.code)
    assert.equal(slowDown.error?.message, 'Telegram asks to wait 7 s before sending again.')
    api.state.retryAfter = 0

    api.state.down = true
    const down = await send('SendToTelegram', { crm_id: '1', text: 'x' })
    assert.equal(down.status, 502)
    assert.equal(down.error?.code, errorCodes.TelegramUnavailable.code)
    assert.equal((await chat.user(1).read('get_telegram_link')).linked, true)
  },
)

forEachDialect('SendOTP goes by Telegram first when the person linked it', async (t, dialect) => {
  const { peer, sentTo, send } = await withLinkedAlice(t, dialect)

  const sent = await send('SendOTP', {
    crm_id: '1',
    email: 'alice@example.com',
    code: '482913',
    channels: CommunicationChannel.Messenger | CommunicationChannel.Email | CommunicationChannel.SMS,
  })

  assert.equal(sent.status, 200, JSON.stringify(sent.error))
  assert.deepEqual(sent.result, { channel: 'telegram', to: '****001' })
  assert.match(sentTo(ADA.id).at(-1) ?? '', /^Your sign-in code is 482913\n/)
  assert.equal(peer.received.length, 0)
})

forEachDialect('SendOTP without the Messenger flag, or for someone unlinked, goes by email', async (t, dialect) => {
  const { peer, sentTo, send } = await withLinkedAlice(t, dialect)
  const telegramBefore = sentTo(ADA.id).length

  const emailOnly = await send('SendOTP', {
    crm_id: '1',
    email: 'alice@example.com',
    code: '111111',
    channels: CommunicationChannel.Email,
  })
  const unlinked = await send('SendOTP', {
    crm_id: '2',
    email: 'bob@example.com',
    code: '222222',
    channels: CommunicationChannel.Messenger | CommunicationChannel.Email,
  })

  assert.deepEqual(emailOnly.result, { channel: 'email', to: 'a***@example.com' })
  assert.deepEqual(unlinked.result, { channel: 'email', to: 'b***@example.com' })
  assert.equal(sentTo(ADA.id).length, telegramBefore)
  assert.deepEqual(
    peer.received.map((mail) => mail.envelopeTo),
    [['alice@example.com'], ['bob@example.com']],
  )
})

forEachDialect('SendOTP falls back to email when the bot is blocked, and unlinks', async (t, dialect) => {
  const { api, chat, peer, send } = await withLinkedAlice(t, dialect)
  api.blocked.add(ADA.id)

  const sent = await send('SendOTP', {
    crm_id: '1',
    email: 'alice@example.com',
    code: '333333',
    channels: CommunicationChannel.Messenger | CommunicationChannel.Email,
  })

  assert.equal(sent.status, 200, JSON.stringify(sent.error))
  assert.deepEqual(sent.result, { channel: 'email', to: 'a***@example.com' })
  assert.match(peer.received[0]?.mail.text ?? '', /333333/)
  assert.equal((await chat.user(1).read('get_telegram_link')).linked, false)

  // With Telegram the only allowed channel, a refusal is DeliveryFailed.
  api.blocked.clear()
  api.state.down = true
  const only = await send('SendOTP', { telegram_chat_id: String(ADA.id), code: '444444', channels: 4 })
  assert.equal(only.status, 502)
  assert.equal(only.error?.code, errorCodes.DeliveryFailed.code)
})
