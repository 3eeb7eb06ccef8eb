import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import type { DatabaseDialect } from '@atrium/platform'
import { forEachDialect, until } from '@atrium/platform/testing'
import { createGroup } from '../../test/support.ts'
import { messageUpdate, type TelegramUser } from '../../test/telegram-bot-api.ts'
import { startTelegramChat, startTokenOf } from '../../test/telegram-chat.ts'

const ALICE_TG = { id: 5_550_001, first_name: 'Alice' }
const BOB_TG = { id: 5_550_002, first_name: 'Bob' }
const CAROL_TG = { id: 5_550_003, first_name: 'Carol' }

/** Alice (1), Bob (2) and Carol (3), each linked to their Telegram, with notifications on for those named. */
async function start(t: TestContext, dialect: DatabaseDialect, notify: number[], intervalSeconds = 0) {
  let clock = Date.UTC(2026, 10, 1, 12)
  const started = await startTelegramChat(t, dialect, {
    now: () => clock,
    telegram: { NotifyIntervalSeconds: intervalSeconds },
  })
  const { chat, update } = started
  await chat.register([1, 'Alice'], [2, 'Bob'], [3, 'Carol'])
  const accounts: Record<number, TelegramUser> = { 1: ALICE_TG, 2: BOB_TG, 3: CAROL_TG }
  for (const person of [1, 2, 3]) {
    const token = startTokenOf((await chat.user(person).ok('link_telegram')).url)
    await update(messageUpdate(accounts[person]!, `/start ${token}`))
    if (notify.includes(person)) await chat.user(person).ok('set_telegram_notifications', { enabled: true })
  }
  const notices = (telegramId: number) =>
    started.sentTo(telegramId).filter((text) => !/linked to this Telegram account/.test(text))
  return { ...started, notices, advance: (ms: number) => (clock += ms) }
}

forEachDialect(
  'a new message notifies the other members who want it, with the sender and a link',
  async (t, dialect) => {
    const { chat, notices } = await start(t, dialect, [1, 2])
    const team = await createGroup(chat.user(1), [2, 3], 2, 'Team')

    await chat.user(1).ok('send_message', { chat_id: team, content: 'Lunch at noon?' })

    await until(() => notices(BOB_TG.id).length === 1, 'Bob’s notification')
    assert.deepEqual(notices(BOB_TG.id), [`Alice in Team:\nLunch at noon?\n\nhttps://example.test/chat/c/${team}`])
    // Bob's own answer notifies Alice, never Bob; Carol never turned notifications on.
    await chat.user(2).ok('send_message', { chat_id: team, content: 'Yes' })
    await until(() => notices(ALICE_TG.id).length === 1, 'Alice’s notification')
    assert.match(notices(ALICE_TG.id)[0] ?? '', /^Bob in Team:\nYes\n/)
    assert.equal(notices(BOB_TG.id).length, 1)
    assert.deepEqual(notices(CAROL_TG.id), [])
  },
)

forEachDialect('a private chat names only the sender; names and text go as plain text', async (t, dialect) => {
  const { chat, api, notices } = await start(t, dialect, [2])
  await chat.call('POST', '/private/v1/set_profiles', {}, { profiles: [{ member: '1', name: '<b>Alice</b>' }] })
  const { chat: pair } = await chat.user(1).ok('create_private_chat', { peer: '2' })

  await chat.user(1).ok('send_message', { chat_id: pair.id, content: '*hi* <i>there</i>' })

  await until(() => notices(BOB_TG.id).length === 1, 'Bob’s notification')
  assert.equal(notices(BOB_TG.id)[0], `<b>Alice</b>:\n*hi* <i>there</i>\n\nhttps://example.test/chat/c/${pair.id}`)
  const call = api.callsOf('sendMessage').at(-1)
  assert.equal(call?.params.parse_mode, undefined)
  assert.deepEqual(call?.params.link_preview_options, { is_disabled: true })
})

forEachDialect('notifications are throttled per person and chat, counting what was held back', async (t, dialect) => {
  const { chat, notices, advance } = await start(t, dialect, [2, 3], 60)
  const team = await createGroup(chat.user(1), [2, 3], 2, 'Team')
  const other = await createGroup(chat.user(1), [2], 2, 'Other')
  const alice = chat.user(1)

  await alice.ok('send_message', { chat_id: team, content: 'one' })
  await alice.ok('send_message', { chat_id: team, content: 'two' })
  await alice.ok('send_message', { chat_id: team, content: 'three' })
  // Another chat has its own window; a notice there also shows the earlier ones were handled.
  await alice.ok('send_message', { chat_id: other, content: 'elsewhere' })
  await until(() => notices(BOB_TG.id).length === 2, 'Bob’s notifications')
  assert.deepEqual(
    notices(BOB_TG.id).map((text) => text.split('\n')[0]),
    ['Alice in Team:', 'Alice in Other:'],
  )

  advance(60_000)
  await alice.ok('send_message', { chat_id: team, content: 'four' })
  await until(() => notices(BOB_TG.id).length === 3, 'Bob’s notification after the interval')
  assert.match(notices(BOB_TG.id)[2] ?? '', /^Alice in Team \(and 2 earlier messages\):\nfour\n/)
  await until(() => notices(CAROL_TG.id).length === 2, 'Carol’s second notification')
  assert.deepEqual(
    notices(CAROL_TG.id).map((text) => text.split('\n')[1]),
    ['one', 'four'],
  )
})

forEachDialect(
  'turning notifications off, unlinking or muting the chat (until unmuted or for a time) stops them, and reactions notify nobody',
  async (t, dialect) => {
    const { chat, notices } = await start(t, dialect, [1, 2, 3])
    const team = await createGroup(chat.user(1), [2, 3], 2, 'Team')

    await chat.user(2).ok('set_telegram_notifications', { enabled: false })
    await chat.user(3).ok('unlink_telegram')
    const message = await chat.user(1).ok('send_message', { chat_id: team, content: 'quiet' })
    // The feed is followed in order: once Alice hears of Bob's message, 'quiet' was handled.
    await chat.user(2).ok('send_message', { chat_id: team, content: 'marker' })
    await until(() => notices(ALICE_TG.id).length === 1, 'Alice’s notification')
    await chat.user(2).ok('set_telegram_notifications', { enabled: true })
    // A reaction is not a message to be told about.
    await chat.user(1).ok('send_message', { chat_id: team, content: '👍', reaction_to: message.id })
    await chat.user(1).ok('send_message', { chat_id: team, content: 'loud' })

    await until(() => notices(BOB_TG.id).length === 1, 'Bob’s notification')
    assert.match(notices(BOB_TG.id)[0] ?? '', /\nloud\n/)
    assert.deepEqual(notices(CAROL_TG.id), [])

    // Bob mutes the team: nothing while it is muted (the feed is followed in order: once Alice
    // hears of his next message, the one before it was handled), news again once he unmutes it.
    await chat.user(2).ok('update_member', { chat_id: team, muted: true })
    await chat.user(1).ok('send_message', { chat_id: team, content: 'while Bob muted it' })
    await chat.user(2).ok('send_message', { chat_id: team, content: 'second marker' })
    await until(() => notices(ALICE_TG.id).length === 2, 'Alice’s second notification')
    await chat.user(2).ok('update_member', { chat_id: team, muted: false })
    await chat.user(1).ok('send_message', { chat_id: team, content: 'after Bob unmuted it' })
    await until(() => notices(BOB_TG.id).length === 2, 'Bob’s notification after unmuting')
    assert.match(notices(BOB_TG.id)[1] ?? '', /\nafter Bob unmuted it\n/)

    // A mute with an end: nothing for what is sent before it, news again after it, with no unmute.
    const ends = new Date(Date.now() + 3000).toISOString()
    await chat.user(2).ok('update_member', { chat_id: team, muted_until: ends })
    await chat.user(1).ok('send_message', { chat_id: team, content: 'during the timed mute' })
    await chat.user(2).ok('send_message', { chat_id: team, content: 'third marker' })
    await until(() => notices(ALICE_TG.id).length === 3, 'Alice’s third notification')
    await until(async () => !(await chat.user(2).read('get_chat_info', { chat_id: team })).muted, 'the mute ended')
    await chat.user(1).ok('send_message', { chat_id: team, content: 'after the timed mute' })
    await until(() => notices(BOB_TG.id).length === 3, 'Bob’s notification after the timed mute')
    assert.match(notices(BOB_TG.id)[2] ?? '', /\nafter the timed mute\n/)
  },
)
