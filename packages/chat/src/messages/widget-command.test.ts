import assert from 'node:assert/strict'
import { ChatMessFlags, createDatabase, createTimetickGenerator, errorCodes, MAX_NODES } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect } from '@atrium/platform/testing'
import { createGroup, startChatOn } from '../../test/support.ts'
import type { ChatDatabase } from '../db/schema.ts'
import { createStatsReader } from '../telegram/widgets/widget-stats.ts'

/**
 * A WidgetCommand row is a hidden command from a widget interaction (spec, ChatMessFlags): stored
 * as a message row, it never shows in the regular feed, unread counts, search or by id.
 */
forEachDialect(
  'WidgetCommand rows stay out of the feed, unread counts, search, actions and stats',
  async (t, dialect) => {
    const url = await createTestDatabaseUrl(t, dialect)
    const chat = await startChatOn(t, url)
    const database = createDatabase<ChatDatabase>(url)
    t.after(() => database.destroy())
    await chat.register([1, 'Alice'], [2, 'Bob'])
    const alice = chat.user(1)
    const bob = chat.user(2)
    const team = await createGroup(alice, [2])
    const shown = await alice.ok('send_message', { chat_id: team, content: 'widget shown: refresh please' })
    const eventsBefore = (await chat.events({ since: 0 })).result.Events.length

    // The hidden row, written as a widget interaction would store it: after the visible message.
    const tick = createTimetickGenerator({ node: MAX_NODES - 1 })()
    await database.db
      .insertInto('chat_mess')
      .values({
        timetick: tick,
        timetick_update: tick,
        chat_id: Number(team),
        owner: 1,
        content: 'widget command: refresh please',
        file_id: 0,
        file_name: '',
        file_size: 0,
        file_type: '',
        flags: ChatMessFlags.WidgetCommand,
        linked_message_id: 0,
        link_kind: 0,
        forwarded_from: 0,
        edited: 0,
      })
      .execute()

    const feed = await bob.read('get_chat_messages', { chat_id: team })
    assert.deepEqual(
      feed.messages.map((message: { id: string }) => message.id),
      [shown.id],
    )
    assert.deepEqual((await bob.read('get_chat_messages', { chat_id: team, after: shown.id })).messages, [])
    const unread = await bob.read('get_unread_messages')
    assert.equal(unread.total, 1)
    assert.deepEqual(
      unread.chats[0].messages.map((message: { id: string }) => message.id),
      [shown.id],
    )
    const found = await bob.read('search_messages', { q: 'refresh please' })
    assert.deepEqual(
      found.messages.map((message: { id: string }) => message.id),
      [shown.id],
    )
    // Not reachable by id either: every action answers as for a message that does not exist.
    for (const [operation, body] of [
      ['edit_message', { message_id: String(tick), content: 'changed' }],
      ['forward_message', { message_id: String(tick), to_chat_id: team }],
      ['toggle_message_reaction', { message_id: String(tick), emoji: '👍' }],
      ['soft_delete_message', { message_id: String(tick) }],
      ['send_message', { chat_id: team, content: 'a reply', reply_to: String(tick) }],
    ] as const) {
      const refused = await alice.post(operation, body)
      assert.equal(refused.error?.code, errorCodes.MessageNotFound.code, operation)
    }
    // Nothing about it reached the events feed, and the widgets' message counts leave it out.
    const events = (await chat.events({ since: 0 })).result.Events
    assert.equal(events.length, eventsBefore)
    assert.ok(events.every((event: { Data: object }) => !JSON.stringify(event.Data).includes('widget command')))
    const stats = await createStatsReader(database.db, 900)(['messages_today', 'messages_last_hour'], Date.now())
    assert.deepEqual([...stats.values()], ['1', '1'])
  },
)
