import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { createDatabase } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, until } from '@atrium/platform/testing'
import { createGroup } from '../../../test/support.ts'
import { type BotApi, messageUpdate, type TelegramUser } from '../../../test/telegram-bot-api.ts'
import { startTelegramChat, startTokenOf, type TelegramChat } from '../../../test/telegram-chat.ts'
import type { ChatDatabase } from '../../db/schema.ts'

const ADA: TelegramUser = { id: 5_560_001, first_name: 'Ada' }
const BOB: TelegramUser = { id: 5_560_002, first_name: 'Bob' }
const PUBLIC_WIDGETS = ['today', 'messages', 'calls']
const ADMIN_WIDGETS = ['support', 'deliveries', 'storage', 'people']

/** Registers a person with scopes as the gateway's profile sync does, and links a Telegram user to them. */
async function linkedPerson(telegram: TelegramChat, crmId: number, name: string, user: TelegramUser, scopes: string[]) {
  await setScopes(telegram, crmId, name, scopes)
  const token = startTokenOf((await telegram.chat.user(crmId).ok('link_telegram')).url)
  const linked = await telegram.update(messageUpdate(user, `/start ${token}`))
  assert.equal(linked.status, 200, JSON.stringify(linked.error))
}

async function setScopes(telegram: TelegramChat, crmId: number, name: string, scopes: string[]) {
  const response = await telegram.chat.call(
    'POST',
    '/private/v1/set_profiles',
    {},
    { profiles: [{ member: String(crmId), name, scopes }] },
  )
  assert.equal(response.status, 200, JSON.stringify(response.error))
}

/** Sends a command as `user` and returns the bot's last text to them. */
async function command(telegram: TelegramChat, user: TelegramUser, text: string): Promise<string> {
  const handled = await telegram.update(messageUpdate(user, text))
  assert.equal(handled.status, 200, JSON.stringify(handled.error))
  return telegram.sentTo(user.id).at(-1) ?? ''
}

/** The message id and text of the last message the bot sent to a Telegram chat. */
function lastSent(api: BotApi, chatId: number) {
  const last = api.sent.filter((message) => message.chatId === chatId).at(-1)
  assert.ok(last, 'a message was sent')
  return last
}

function editsOf(api: BotApi, chatId: number, messageId: number) {
  return api
    .callsOf('editMessageText')
    .filter((call) => Number(call.params.chat_id) === chatId && Number(call.params.message_id) === messageId)
}

function widgetNames(list: string): string[] {
  return [...list.matchAll(/^\/widget ([a-z_0-9]+):/gm)].map((match) => match[1]!)
}

function startWidgets(
  t: TestContext,
  dialect: 'sqlite' | 'postgres',
  options: Parameters<typeof startTelegramChat>[2] = {},
) {
  return startTelegramChat(t, dialect, {
    ...options,
    telegram: { Widgets: { RefreshSeconds: 1, MinRefreshSeconds: 1, LiveHours: 1 }, ...options.telegram },
  })
}

forEachDialect(
  '/widgets lists what a linked person may see: admin widgets only with the admin scope',
  async (t, dialect) => {
    const telegram = await startWidgets(t, dialect)
    assert.match(await command(telegram, ADA, '/widgets'), /Widgets are for linked accounts/)
    assert.match(await command(telegram, ADA, '/widget today'), /Widgets are for linked accounts/)

    await linkedPerson(telegram, 1, 'Alice', ADA, ['admin'])
    await linkedPerson(telegram, 2, 'Bruno', BOB, [])
    assert.deepEqual(widgetNames(await command(telegram, ADA, '/widgets')), [...PUBLIC_WIDGETS, ...ADMIN_WIDGETS])
    assert.deepEqual(widgetNames(await command(telegram, BOB, '/widgets')), PUBLIC_WIDGETS)

    // An admin widget is refused as if it did not exist; no widget message is posted.
    const sendsBefore = telegram.api.callsOf('sendMessage').length
    for (const name of ADMIN_WIDGETS)
      assert.equal(
        await command(telegram, BOB, `/widget ${name}`),
        `There is no widget "${name}" for you. /widgets lists the ones you may see.`,
      )
    assert.equal(telegram.api.callsOf('sendMessage').length, sendsBefore + ADMIN_WIDGETS.length)
    assert.match(await command(telegram, BOB, '/widget nosuch'), /There is no widget "nosuch"/)
    assert.match(await command(telegram, BOB, '/widget'), /Send \/widget <name>/)
    // A group chat is not a place for dashboards.
    const group = await telegram.update(messageUpdate(ADA, '/widgets', 'group'))
    assert.equal(group.status, 200)
    assert.match(telegram.sentTo(-100_123).at(-1) ?? '', /private chat/)
  },
)

forEachDialect(
  'a widget shows stats computed from the module’s rows, and is refreshed at its interval',
  async (t, dialect) => {
    const telegram = await startWidgets(t, dialect)
    const { chat, api } = telegram
    await chat.register([3, 'Carol'])
    await linkedPerson(telegram, 1, 'Alice', ADA, [])
    const team = await createGroup(chat.user(1), [3])
    for (const content of ['one', 'two', 'three']) await chat.user(1).ok('send_message', { chat_id: team, content })

    const posted = Date.now()
    const shown = await command(telegram, ADA, '/widget messages')
    assert.match(shown, /^Messages\n\nLast hour: 3\nToday: 3\nActive chats today: 1\n\nUpdated \d\d:\d\d:\d\d UTC$/)
    const { messageId } = lastSent(api, ADA.id)

    // One more message: the next refresh edits the same Telegram message with the new count.
    await chat.user(3).ok('send_message', { chat_id: team, content: 'four' })
    await until(() => editsOf(api, ADA.id, messageId).length >= 3, 'three refreshes', 15_000)
    const edits = editsOf(api, ADA.id, messageId)
    assert.match(String(edits.at(-1)?.params.text), /Last hour: 4\nToday: 4\nActive chats today: 1/)
    assert.equal(api.textOf(ADA.id, messageId), String(edits.at(-1)?.params.text))
    // At the interval (1 s here), never faster: the refresher looks once a second for due messages.
    const times = [posted, ...edits.map((edit) => edit.at)]
    for (let i = 1; i < times.length; i++)
      assert.ok(times[i]! - times[i - 1]! >= 900, `gap ${times[i]! - times[i - 1]!} ms`)
    assert.ok(times.at(-1)! - posted < 8_000, 'three refreshes within a few seconds')
  },
)

forEachDialect('a scope removed at the gateway stops an admin widget at its next refresh', async (t, dialect) => {
  const url = await createTestDatabaseUrl(t, dialect)
  const database = createDatabase<ChatDatabase>(url)
  t.after(() => database.destroy())
  const telegram = await startWidgets(t, dialect, { url })
  const { api } = telegram
  await linkedPerson(telegram, 1, 'Alice', ADA, ['admin', 'support'])
  assert.match(await command(telegram, ADA, '/widget storage'), /^File storage\n\nFiles: 0\nStorage used: 0 B/)
  const { messageId } = lastSent(api, ADA.id)
  await until(() => editsOf(api, ADA.id, messageId).length >= 1, 'a refresh')

  await setScopes(telegram, 1, 'Alice', ['support'])
  await until(
    () => /does not have the scope/.test(api.textOf(ADA.id, messageId) ?? ''),
    'the widget message to say it stopped',
  )
  assert.equal(
    api.textOf(ADA.id, messageId),
    'File storage\n\nNo longer shown: your account does not have the scope this widget needs.',
  )
  // Nothing is left to refresh it.
  assert.deepEqual(await database.db.selectFrom('telegram_widget_views').selectAll().execute(), [])
  assert.match(await command(telegram, ADA, '/widget storage'), /There is no widget "storage" for you/)
})

forEachDialect(
  'a refresh under way when a newer message replaces its own cannot undo the notice',
  async (t, dialect) => {
    const telegram = await startWidgets(t, dialect)
    const { api } = telegram
    await linkedPerson(telegram, 1, 'Alice', ADA, [])
    // Telegram is slow to answer the first message's refresh (due after 1 s) …
    const held = api.holdNext('editMessageText')
    await command(telegram, ADA, '/widget today')
    const first = lastSent(api, ADA.id)
    await until(() => editsOf(api, ADA.id, first.messageId).length === 1, 'the refresh under way')
    // … while a newer widget message replaces it.
    const replacing = command(telegram, ADA, '/widget messages')
    // Unserialised, the notice would be written now, before the refresh's edit lands; serialised,
    // it waits for that edit, so this wait ends at its bound.
    const notice = () => editsOf(api, ADA.id, first.messageId).length === 2
    await until(notice, 'the notice written while the refresh is under way', 1500).catch(() => {})
    held.release()
    await held.applied
    await replacing
    assert.equal(api.textOf(ADA.id, first.messageId), 'No longer refreshed: a newer widget message replaced it.')
  },
)

const REPLACED = 'No longer refreshed: a newer widget message replaced it.'
const WIDGETS = { RefreshSeconds: 1, MinRefreshSeconds: 1, LiveHours: 1 }

/** Two chat instances on one database and one Telegram; `refresh` says which of them refresh widgets. */
async function twoInstances(t: TestContext, dialect: 'sqlite' | 'postgres', refresh: [boolean, boolean]) {
  const url = await createTestDatabaseUrl(t, dialect)
  const one = await startWidgets(t, dialect, { url, telegram: { Widgets: { ...WIDGETS, Refresh: refresh[0] } } })
  const two = await startWidgets(t, dialect, {
    url,
    api: one.api,
    telegram: { Widgets: { ...WIDGETS, Refresh: refresh[1] } },
  })
  return { one, two, api: one.api, url }
}

forEachDialect(
  'with two chat instances refreshing, a live message is refreshed by one at a time',
  async (t, dialect) => {
    const { one, api } = await twoInstances(t, dialect, [true, true])
    await linkedPerson(one, 1, 'Alice', ADA, [])
    // Telegram holds the first refresh's edit; the message stays due for the other instance …
    const held = api.holdNext('editMessageText')
    await command(one, ADA, '/widget today')
    const { messageId } = lastSent(api, ADA.id)
    await until(() => editsOf(api, ADA.id, messageId).length === 1, 'the refresh under way')
    // … which must not edit it too: both tick every second, so a second edit would come within this.
    const second = () => editsOf(api, ADA.id, messageId).length > 1
    await until(second, 'a second refresh of the held message', 2500).catch(() => {})
    assert.equal(editsOf(api, ADA.id, messageId).length, 1, 'one refresh at a time')
    held.release()
    await held.applied
    await until(() => editsOf(api, ADA.id, messageId).length >= 2, 'the refreshes going on once the edit landed')
  },
)

forEachDialect(
  'a refresh under way on one instance cannot undo the notice of a replacement made on another',
  async (t, dialect) => {
    const { one, two, api } = await twoInstances(t, dialect, [true, false])
    await linkedPerson(one, 1, 'Alice', ADA, [])
    const held = api.holdNext('editMessageText')
    await command(one, ADA, '/widget today')
    const first = lastSent(api, ADA.id)
    await until(() => editsOf(api, ADA.id, first.messageId).length === 1, 'the refresh under way on the first')
    // The second instance replaces the message; its notice lands before the held refresh does.
    await command(two, ADA, '/widget messages')
    assert.equal(api.textOf(ADA.id, first.messageId), REPLACED)
    held.release()
    await held.applied
    await until(() => api.textOf(ADA.id, first.messageId) === REPLACED, 'the notice written again after the refresh')
    const second = lastSent(api, ADA.id)
    await until(() => editsOf(api, ADA.id, second.messageId).length >= 1, 'the new message refreshed')
  },
)

forEachDialect(
  'parallel replacements on two instances leave one live message; every other one says so',
  async (t, dialect) => {
    const { one, two, api, url } = await twoInstances(t, dialect, [false, false])
    await linkedPerson(one, 1, 'Alice', ADA, [])
    const commands = Array.from({ length: 8 }, (_, index) => command(index % 2 ? two : one, ADA, '/widget today'))
    await Promise.all(commands)
    const widgetMessages = api.sent.filter((message) => message.chatId === ADA.id && /^Today\n/.test(message.text))
    assert.equal(widgetMessages.length, 8)
    const database = createDatabase<ChatDatabase>(url)
    t.after(() => database.destroy())
    const views = await database.db.selectFrom('telegram_widget_views').selectAll().execute()
    assert.equal(views.length, 1)
    const live = Number(views[0]!.message_id)
    // The replaced ones' notices may still be on their way (a replacement's last edit follows its commit).
    await until(
      () => widgetMessages.every(({ messageId }) => messageId === live || api.textOf(ADA.id, messageId) === REPLACED),
      'every replaced message to say so',
    )
    assert.match(api.textOf(ADA.id, live) ?? '', /^Today\n/)
  },
)

forEachDialect(
  'a newer widget message replaces the live one, and a live message ends after LiveHours',
  async (t, dialect) => {
    let offset = 0
    const telegram = await startWidgets(t, dialect, { now: () => Date.now() + offset })
    const { api } = telegram
    await linkedPerson(telegram, 1, 'Alice', ADA, [])
    await command(telegram, ADA, '/widget today')
    const first = lastSent(api, ADA.id)
    await command(telegram, ADA, '/widget messages')
    const second = lastSent(api, ADA.id)
    assert.equal(api.textOf(ADA.id, first.messageId), 'No longer refreshed: a newer widget message replaced it.')
    await until(() => editsOf(api, ADA.id, second.messageId).length >= 1, 'the new message to be refreshed')
    const firstEdits = editsOf(api, ADA.id, first.messageId).length

    // Past LiveHours (1 h here): one last edit keeps the values and says how to get a fresh one.
    offset = 2 * 3_600_000
    await until(() => /no longer refreshed/.test(api.textOf(ADA.id, second.messageId) ?? ''), 'the live message to end')
    assert.match(
      api.textOf(ADA.id, second.messageId) ?? '',
      /^Messages\n\nLast hour: 0\n[\s\S]*\n\nLive until \d\d:\d\d:\d\d UTC; no longer refreshed\. Send \/widget messages for a fresh one\.$/,
    )
    assert.equal(editsOf(api, ADA.id, first.messageId).length, firstEdits)
  },
)

forEachDialect('live widget messages survive a restart of the module', async (t, dialect) => {
  const url = await createTestDatabaseUrl(t, dialect)
  const first = await startWidgets(t, dialect, { url })
  const { api } = first
  await linkedPerson(first, 1, 'Alice', ADA, [])
  await command(first, ADA, '/widget calls')
  const { messageId } = lastSent(api, ADA.id)
  await until(() => editsOf(api, ADA.id, messageId).length >= 1, 'a refresh before the restart')
  await first.close()
  const before = editsOf(api, ADA.id, messageId).length

  await startWidgets(t, dialect, { url, api })
  await until(() => editsOf(api, ADA.id, messageId).length >= before + 2, 'refreshes after the restart')
  assert.match(api.textOf(ADA.id, messageId) ?? '', /^Calls\n\nCalls today: 0\n\nUpdated /)
})
