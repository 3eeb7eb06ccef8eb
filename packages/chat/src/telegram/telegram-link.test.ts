import assert from 'node:assert/strict'
import { createDatabase, errorCodes } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect } from '@atrium/platform/testing'
import { startChat } from '../../test/support.ts'
import { messageUpdate } from '../../test/telegram-bot-api.ts'
import { startTelegramChat, startTokenOf } from '../../test/telegram-chat.ts'
import type { ChatDatabase } from '../db/schema.ts'

const ADA = { id: 5_550_001, first_name: 'Ada', last_name: 'Lovelace', username: 'ada' }
const GRACE = { id: 5_550_002, first_name: 'Grace' }

forEachDialect('a deep link with a one-time token links the Telegram chat that starts it', async (t, dialect) => {
  const url = await createTestDatabaseUrl(t, dialect)
  const { chat, update, sentTo, api } = await startTelegramChat(t, dialect, { url })
  await chat.register([1, 'Alice'])
  const alice = chat.user(1)
  assert.deepEqual(await alice.read('get_telegram_link'), {
    available: true,
    linked: false,
    telegram_name: '',
    notifications: false,
  })

  const before = Date.now()
  const link = await alice.ok('link_telegram')
  const token = startTokenOf(link.url)
  assert.equal(link.bot_username, 'atrium_test_bot')
  const expires = Date.parse(link.expires_at)
  assert.ok(expires >= before + 10 * 60_000 && expires <= Date.now() + 10 * 60_000, link.expires_at)
  // getMe was called on the bot's own token path.
  assert.ok(api.callsOf('getMe').length >= 1)

  // Stored only as its hash.
  const database = createDatabase<ChatDatabase>(url)
  t.after(() => database.destroy())
  const stored = await database.db.selectFrom('telegram_link_tokens').selectAll().execute()
  assert.equal(stored.length, 1)
  assert.equal(stored[0]?.member, 1)
  assert.notEqual(stored[0]?.token_hash, token)
  assert.match(stored[0]?.token_hash ?? '', /^[0-9a-f]{64}$/)

  const handled = await update(messageUpdate(ADA, `/start ${token}`))
  assert.equal(handled.status, 200, JSON.stringify(handled.error))
  assert.match(sentTo(ADA.id).at(-1) ?? '', /now linked to this Telegram account/)
  assert.deepEqual(await alice.read('get_telegram_link'), {
    available: true,
    linked: true,
    telegram_name: 'Ada Lovelace (@ada)',
    notifications: false,
  })
  assert.equal((await database.db.selectFrom('telegram_link_tokens').selectAll().execute()).length, 0)

  // The same token again, from another Telegram user: refused politely, nothing linked.
  await update(messageUpdate(GRACE, `/start ${token}`))
  assert.match(sentTo(GRACE.id).at(-1) ?? '', /not valid any more/)
  const links = await database.db.selectFrom('telegram_links').selectAll().execute()
  assert.deepEqual(
    links.map((row) => [row.member, row.telegram_chat_id]),
    [[1, ADA.id]],
  )
})

forEachDialect('a Telegram name with line breaks is stored without them; NUL is refused', async (t, dialect) => {
  const { chat, update } = await startTelegramChat(t, dialect)
  await chat.register([1, 'Alice'])
  const token = startTokenOf((await chat.user(1).ok('link_telegram')).url)

  // Every body is checked for NUL before it reaches a handler (PostgreSQL could not store it).
  const withNul = await update(messageUpdate({ id: 5_550_009, first_name: 'Ada\u0000' }, `/start ${token}`))
  assert.equal(withNul.status, 400)
  assert.equal((await chat.user(1).read('get_telegram_link')).linked, false)

  const handled = await update(
    messageUpdate({ id: 5_550_009, first_name: 'Ada\r\nAdmin', last_name: '\t' }, `/start ${token}`),
  )
  assert.equal(handled.status, 200, JSON.stringify(handled.error))
  assert.equal((await chat.user(1).read('get_telegram_link')).telegram_name, 'Ada Admin')
})

forEachDialect('an expired link is refused and links nothing', async (t, dialect) => {
  let clock = Date.UTC(2026, 10, 1, 12)
  const { chat, update, sentTo } = await startTelegramChat(t, dialect, {
    now: () => clock,
    telegram: { LinkTtlMinutes: 5 },
  })
  await chat.register([1, 'Alice'])
  const link = await chat.user(1).ok('link_telegram')
  assert.equal(link.expires_at, new Date(clock + 5 * 60_000).toISOString())
  clock += 5 * 60_000

  await update(messageUpdate(ADA, `/start ${startTokenOf(link.url)}`))

  assert.match(sentTo(ADA.id).at(-1) ?? '', /has expired/)
  assert.equal((await chat.user(1).read('get_telegram_link')).linked, false)
})

forEachDialect('only the newest link of a person works', async (t, dialect) => {
  const { chat, update, sentTo } = await startTelegramChat(t, dialect)
  await chat.register([1, 'Alice'])
  const first = await chat.user(1).ok('link_telegram')
  const second = await chat.user(1).ok('link_telegram')
  assert.notEqual(first.url, second.url)

  await update(messageUpdate(ADA, `/start ${startTokenOf(first.url)}`))
  assert.match(sentTo(ADA.id).at(-1) ?? '', /not valid any more/)
  await update(messageUpdate(ADA, `/start ${startTokenOf(second.url)}`))
  assert.match(sentTo(ADA.id).at(-1) ?? '', /now linked/)
})

forEachDialect('a Telegram account linked to one person is refused for another', async (t, dialect) => {
  const { chat, update, sentTo } = await startTelegramChat(t, dialect)
  await chat.register([1, 'Alice'], [2, 'Bob'])
  await update(messageUpdate(ADA, `/start ${startTokenOf((await chat.user(1).ok('link_telegram')).url)}`))

  await update(messageUpdate(ADA, `/start ${startTokenOf((await chat.user(2).ok('link_telegram')).url)}`))

  assert.match(sentTo(ADA.id).at(-1) ?? '', /linked to another account/)
  assert.equal((await chat.user(1).read('get_telegram_link')).linked, true)
  assert.equal((await chat.user(2).read('get_telegram_link')).linked, false)
})

forEachDialect('a second link moves the person to the new Telegram account', async (t, dialect) => {
  const { chat, update, sentTo } = await startTelegramChat(t, dialect)
  await chat.register([1, 'Alice'])
  await update(messageUpdate(ADA, `/start ${startTokenOf((await chat.user(1).ok('link_telegram')).url)}`))

  await update(messageUpdate(GRACE, `/start ${startTokenOf((await chat.user(1).ok('link_telegram')).url)}`))

  assert.match(sentTo(GRACE.id).at(-1) ?? '', /replaces the one linked before/)
  assert.equal((await chat.user(1).read('get_telegram_link')).telegram_name, 'Grace')
  await update(messageUpdate(ADA, '/status'))
  assert.match(sentTo(ADA.id).at(-1) ?? '', /not linked/)
})

forEachDialect('unlinking from the web client or from Telegram removes the link', async (t, dialect) => {
  const { chat, update, sentTo } = await startTelegramChat(t, dialect)
  await chat.register([1, 'Alice'])
  const alice = chat.user(1)
  await update(messageUpdate(ADA, `/start ${startTokenOf((await alice.ok('link_telegram')).url)}`))

  const unlinked = await alice.ok('unlink_telegram')
  assert.equal(unlinked.linked, false)
  const send = await chat.call('POST', '/private/v1/SendToTelegram', {}, { crm_id: '1', text: 'hi' })
  assert.equal(send.error?.code, errorCodes.TelegramNotLinked.code)

  await update(messageUpdate(ADA, `/start ${startTokenOf((await alice.ok('link_telegram')).url)}`))
  assert.equal((await alice.read('get_telegram_link')).linked, true)
  await update(messageUpdate(ADA, '/unlink'))
  assert.match(sentTo(ADA.id).at(-1) ?? '', /no longer linked/)
  assert.equal((await alice.read('get_telegram_link')).linked, false)
  await update(messageUpdate(ADA, '/unlink'))
  assert.match(sentTo(ADA.id).at(-1) ?? '', /not linked to any account/)
})

forEachDialect('blocking the bot in Telegram removes the link', async (t, dialect) => {
  const { chat, update } = await startTelegramChat(t, dialect)
  await chat.register([1, 'Alice'])
  await update(messageUpdate(ADA, `/start ${startTokenOf((await chat.user(1).ok('link_telegram')).url)}`))

  const member = (status: string) => ({ user: { id: 7_012_345_678, is_bot: true, first_name: 'Atrium Test' }, status })
  await update({
    update_id: 77,
    my_chat_member: {
      chat: { id: ADA.id, type: 'private', first_name: 'Ada' },
      from: { id: ADA.id, is_bot: false, first_name: 'Ada' },
      date: Math.floor(Date.now() / 1000),
      old_chat_member: member('member'),
      new_chat_member: { ...member('kicked'), until_date: 0 },
    },
  })

  assert.equal((await chat.user(1).read('get_telegram_link')).linked, false)
})

forEachDialect('start without a token, in a group, or with a malformed token links nothing', async (t, dialect) => {
  const { chat, update, sentTo } = await startTelegramChat(t, dialect)
  await chat.register([1, 'Alice'])
  const token = startTokenOf((await chat.user(1).ok('link_telegram')).url)

  await update(messageUpdate(ADA, '/start'))
  assert.match(sentTo(ADA.id).at(-1) ?? '', /choose "Link Telegram"/)
  await update(messageUpdate(ADA, `/start ${token}`, 'group'))
  assert.match(sentTo(-100_123).at(-1) ?? '', /private chat/)
  await update(messageUpdate(ADA, '/start ../../etc/passwd'))
  assert.match(sentTo(ADA.id).at(-1) ?? '', /not valid any more/)
  assert.equal((await chat.user(1).read('get_telegram_link')).linked, false)
  // The token survived all that and still works once.
  await update(messageUpdate(ADA, `/start ${token}`))
  assert.equal((await chat.user(1).read('get_telegram_link')).linked, true)
})

forEachDialect('parallel starts keep one person per Telegram chat and one chat per person', async (t, dialect) => {
  const { chat, update, sentTo } = await startTelegramChat(t, dialect)
  const people = Array.from({ length: 8 }, (_, i) => i + 1)
  await chat.register(...people)
  const tokens = await Promise.all(
    people.map(async (person) => startTokenOf((await chat.user(person).ok('link_telegram')).url)),
  )

  // Eight people start their links from one Telegram account at once.
  const answers = await Promise.all(tokens.map((token) => update(messageUpdate(ADA, `/start ${token}`))))

  assert.ok(answers.every((answer) => answer.status === 200))
  const states = await Promise.all(people.map((person) => chat.user(person).read('get_telegram_link')))
  assert.equal(states.filter((state) => state.linked).length, 1)
  const replies = sentTo(ADA.id)
  assert.equal(replies.filter((text) => /now linked/.test(text)).length, 1)
  assert.equal(replies.filter((text) => /linked to another account/.test(text)).length, 7)
})

forEachDialect('without a bot token Telegram is shown unavailable and linking is refused', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register([1, 'Alice'])
  assert.equal((await chat.user(1).read('get_telegram_link')).available, false)
  const link = await chat.user(1).post('link_telegram')
  assert.equal(link.status, 503)
  assert.equal(link.error?.code, errorCodes.TelegramNotConfigured.code)
  const send = await chat.call('POST', '/private/v1/SendToTelegram', {}, { telegram_chat_id: '5', text: 'x' })
  assert.equal(send.error?.code, errorCodes.TelegramNotConfigured.code)
})

forEachDialect('notifications can be turned on only with a link', async (t, dialect) => {
  const { chat, update } = await startTelegramChat(t, dialect)
  await chat.register([1, 'Alice'])
  const refused = await chat.user(1).post('set_telegram_notifications', { enabled: true })
  assert.equal(refused.status, 404)
  assert.equal(refused.error?.code, errorCodes.TelegramNotLinked.code)
  await update(messageUpdate(ADA, `/start ${startTokenOf((await chat.user(1).ok('link_telegram')).url)}`))
  assert.equal((await chat.user(1).ok('set_telegram_notifications', { enabled: true })).notifications, true)
  assert.equal((await chat.user(1).read('get_telegram_link')).notifications, true)
})
