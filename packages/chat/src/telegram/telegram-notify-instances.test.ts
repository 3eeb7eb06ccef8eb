import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { createDatabase, type DatabaseDialect } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, until } from '@atrium/platform/testing'
import { createGroup } from '../../test/support.ts'
import type { BotApi } from '../../test/telegram-bot-api.ts'
import { messageUpdate } from '../../test/telegram-bot-api.ts'
import { startTelegramChat, startTokenOf, type TelegramChat } from '../../test/telegram-chat.ts'
import type { ChatDatabase } from '../db/schema.ts'
import { LEASE_MS, MAX_AGE_MS } from './telegram-notifier.ts'

const ALICE_TG = { id: 5_560_001, first_name: 'Alice' }
const BOB_TG = { id: 5_560_002, first_name: 'Bob' }

/**
 * Chat instances on one database and one Telegram, sharing a clock the test moves (the notifier's
 * lease runs on it). The first is started alone with notifications off: it runs the migrations.
 */
async function instances(t: TestContext, dialect: DatabaseDialect) {
  const url = await createTestDatabaseUrl(t, dialect)
  let clock = Date.now()
  const now = () => clock
  const quiet = await startTelegramChat(t, dialect, { url, now, telegram: { Notifications: false } })
  const api: BotApi = quiet.api
  const start = (notifications = true) =>
    startTelegramChat(t, dialect, {
      url,
      api,
      now,
      telegram: { Notifications: notifications, NotifyIntervalSeconds: 0 },
    })
  const database = createDatabase<ChatDatabase>(url)
  t.after(() => database.destroy())
  const { db } = database
  /** The newest event's tick, and how far the notification senders have read. */
  const newestEvent = async () =>
    Number(
      (
        await db
          .selectFrom('chat_events')
          .select((eb) => eb.fn.max('tick_update').as('tick'))
          .executeTakeFirst()
      )?.tick,
    )
  const sharedCursor = async () =>
    Number((await db.selectFrom('telegram_state').select('cursor').executeTakeFirst())?.cursor ?? 0)
  /** The message texts of Bob's notifications (not the bot's answer to linking), as they reached Telegram. */
  const bobHeard = () =>
    quiet
      .sentTo(BOB_TG.id)
      .filter((text) => !/linked to this Telegram account/.test(text))
      .map((text) => text.split('\n')[1])
  return { quiet, api, start, bobHeard, newestEvent, sharedCursor, advance: (ms: number) => (clock += ms) }
}

/** Registers Alice (1) and Bob (2), links both to Telegram with Bob's notifications on; returns their group. */
async function people(instance: TelegramChat): Promise<string> {
  const { chat, update } = instance
  await chat.register([1, 'Alice'], [2, 'Bob'])
  for (const [person, account] of [
    [1, ALICE_TG],
    [2, BOB_TG],
  ] as const) {
    const token = startTokenOf((await chat.user(person).ok('link_telegram')).url)
    await update(messageUpdate(account, `/start ${token}`))
  }
  await chat.user(2).ok('set_telegram_notifications', { enabled: true })
  return createGroup(chat.user(1), [2], 2, 'Team')
}

/** Alice writes `text` in the team through one instance. */
const say = (instance: TelegramChat, team: string, text: string) =>
  instance.chat.user(1).ok('send_message', { chat_id: team, content: text })

/** Waits for Bob to have heard `expected`, then a little longer for anything sent twice. */
async function bobHeardExactly(heard: () => Array<string | undefined>, expected: string[]) {
  const sorted = (texts: Array<string | undefined>) => [...texts].sort()
  await until(() => heard().length >= expected.length, `Bob’s ${expected.length} notifications`)
  // A second sender would follow within its poll (2 s): give it that long to show up.
  await until(() => heard().length > expected.length, 'a notification sent twice', 2500).catch(() => {})
  assert.deepEqual(sorted(heard()), sorted(expected))
}

forEachDialect(
  'with two chat instances notifying, each message is notified once; when the sender stops, the other goes on',
  async (t, dialect) => {
    const { quiet, start, bobHeard } = await instances(t, dialect)
    const team = await people(quiet)
    // The first to start sends; the second waits for the lease.
    const one = await start()
    const two = await start()

    for (const [index, instance] of [one, two, one, two].entries()) await say(instance, team, `message ${index}`)
    await bobHeardExactly(bobHeard, ['message 0', 'message 1', 'message 2', 'message 3'])

    // Stopped, the sender gives the lease back with its cursor: the other sends from there on.
    await one.close()
    await say(two, team, 'after the first stopped')
    await bobHeardExactly(bobHeard, ['message 0', 'message 1', 'message 2', 'message 3', 'after the first stopped'])
  },
)

forEachDialect('instances started together still send each notification once', async (t, dialect) => {
  const { quiet, start, bobHeard } = await instances(t, dialect)
  const team = await people(quiet)
  const started = await Promise.all([start(), start(), start()])

  for (const [index, instance] of started.entries()) await say(instance, team, `from instance ${index}`)
  await bobHeardExactly(bobHeard, ['from instance 0', 'from instance 1', 'from instance 2'])
})

forEachDialect(
  'a sender that hangs loses the lease when it runs out; what it had claimed is not sent again, nor what the next sent',
  async (t, dialect) => {
    const { quiet, api, start, bobHeard, advance } = await instances(t, dialect)
    const team = await people(quiet)
    const one = await start()
    const two = await start()

    // Telegram holds the first sender's notification …
    const held = api.holdNext('sendMessage')
    await say(one, team, 'held')
    await until(() => bobHeard().includes('held'), 'the held notification to reach Telegram')
    // … for longer than its lease: the other instance takes over and sends what came after …
    advance(LEASE_MS + 1)
    await say(two, team, 'meanwhile')
    await until(() => bobHeard().includes('meanwhile'), 'the other instance to take over')
    // … and stops, giving the lease back. Released, the first sender takes it again and goes on
    // from where the other got to, not from where it had got to itself.
    await two.close()
    held.release()
    await held.applied
    await say(one, team, 'after')
    await bobHeardExactly(bobHeard, ['held', 'meanwhile', 'after'])
  },
)

forEachDialect(
  'notifications go on after a restart from where they stopped; messages too old by then are skipped',
  async (t, dialect) => {
    const { quiet, start, bobHeard, newestEvent, sharedCursor, advance } = await instances(t, dialect)
    const team = await people(quiet)

    const first = await start()
    await first.close()
    await say(quiet, team, 'while none was notifying')
    const second = await start()
    await bobHeardExactly(bobHeard, ['while none was notifying'])

    await second.close()
    await say(quiet, team, 'long ago')
    // Message times follow the wall clock; the notifier's clock jumps past the age limit until the
    // next sender has read past that message (the shared cursor says so), then rejoins it.
    const head = await newestEvent()
    advance(MAX_AGE_MS + 60_000)
    await start()
    await until(async () => (await sharedCursor()) >= head, 'the next sender to read past the old message')
    advance(-(MAX_AGE_MS + 60_000))
    await say(quiet, team, 'fresh')
    // The feed is followed in order: once 'fresh' is heard, 'long ago' was handled.
    await bobHeardExactly(bobHeard, ['while none was notifying', 'fresh'])
  },
)
