import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { ChatMessFlags, createDatabase, type DatabaseDialect, LinkKind, migrateToLatest } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, openTestDatabase } from '@atrium/platform/testing'
import type { Kysely } from 'kysely'
import { type ChatClient, createGroup, startChatOn } from '../../test/support.ts'
import { chatMigrations } from '../db/migrations/index.ts'
import type { ChatDatabase, ChatMessTable } from '../db/schema.ts'

const PARALLEL = 12

/**
 * Runs `request` PARALLEL times at once, after a round of reads has opened a connection for each,
 * so the requests really overlap instead of waiting for connections one after another.
 */
async function inParallel<T>(chat: ChatClient, request: () => Promise<T>): Promise<T[]> {
  await Promise.all(Array.from({ length: PARALLEL }, () => chat.user(1).read('get_chats')))
  return Promise.all(Array.from({ length: PARALLEL }, request))
}

/** The chat module and a connection of its own to the same database, to check the stored rows. */
async function startWithDatabase(t: TestContext, dialect: DatabaseDialect) {
  const url = await createTestDatabaseUrl(t, dialect)
  const chat = await startChatOn(t, url)
  await chat.register(1, 2)
  const database = createDatabase<ChatDatabase>(url)
  t.after(() => database.destroy())
  const { db } = database

  /** Every reaction row (live or removed) of `owner` on `messageId`, oldest first. */
  async function reactionRows(messageId: string, owner: number) {
    const rows = await db
      .selectFrom('chat_mess')
      .select(['content', 'flags'])
      .where('linked_message_id', '=', Number(messageId))
      .where('owner', '=', owner)
      .where('link_kind', '=', LinkKind.Reaction)
      .orderBy('timetick')
      .execute()
    return rows.map((row) => ({ emoji: row.content, live: (Number(row.flags) & ChatMessFlags.Deleted) === 0 }))
  }

  /** The `added` of each stored ReactionChanged event on `messageId`, in feed order. */
  async function reactionEvents(messageId: string) {
    const rows = await db
      .selectFrom('chat_events')
      .select('data')
      .where('event_type', '=', 'ReactionChanged')
      .orderBy('timetick')
      .execute()
    return rows
      .map((row) => (typeof row.data === 'string' ? JSON.parse(row.data) : row.data))
      .filter((data) => data.message_id === messageId)
      .map((data) => data.added as boolean)
  }

  return { chat, reactionRows, reactionEvents }
}

forEachDialect(
  'parallel reactions by one member with one emoji store one reaction and one event',
  async (t, dialect) => {
    const { chat, reactionRows, reactionEvents } = await startWithDatabase(t, dialect)
    const groupId = await createGroup(chat.user(1), [2])
    const target = await chat.user(1).ok('send_message', { chat_id: groupId, content: 'vote here' })

    const answers = await inParallel(chat, () =>
      chat.user(2).post('send_message', { chat_id: groupId, content: '👍', reaction_to: target.id }),
    )
    assert.deepEqual(
      answers.map((answer) => answer.status),
      Array(PARALLEL).fill(200),
    )

    // Adding is idempotent: whatever the interleaving, one live row and one "added" event.
    assert.deepEqual(await reactionRows(target.id, 2), [{ emoji: '👍', live: true }])
    assert.deepEqual(await reactionEvents(target.id), [true])
    const { messages } = await chat.user(2).read('get_chat_messages', { chat_id: groupId })
    assert.deepEqual(messages[0].reactions, [{ emoji: '👍', count: 1, mine: true }])

    // A toggle now removes it, for good.
    const removed = await chat.user(2).ok('toggle_message_reaction', { message_id: target.id, emoji: '👍' })
    assert.equal(removed.added, false)
    assert.deepEqual(removed.message.reactions, [])
    assert.deepEqual(await reactionRows(target.id, 2), [{ emoji: '👍', live: false }])
  },
)

forEachDialect(
  'parallel toggles by one member leave at most one live reaction and an event per change',
  async (t, dialect) => {
    const { chat, reactionRows, reactionEvents } = await startWithDatabase(t, dialect)
    const groupId = await createGroup(chat.user(1), [2])
    const target = await chat.user(1).ok('send_message', { chat_id: groupId, content: 'vote here' })

    const answers = await inParallel(chat, () =>
      chat.user(2).post('toggle_message_reaction', { message_id: target.id, emoji: '🎉' }),
    )
    assert.deepEqual(
      answers.map((answer) => answer.status),
      Array(PARALLEL).fill(200),
    )

    // How the toggles interleave is up to the server; what it stored must still be one story: at
    // most one live row, each stored row was added once (one event) and removed at most once (one
    // event), so the events alternate, starting with an add.
    const rows = await reactionRows(target.id, 2)
    const events = await reactionEvents(target.id)
    const live = rows.filter((row) => row.live).length
    assert.ok(live <= 1, `${live} live reactions`)
    assert.ok(rows.length >= 1, 'the first toggle added a reaction')
    assert.equal(events.filter((added) => added).length, rows.length, 'one "added" event per stored row')
    assert.equal(events.filter((added) => !added).length, rows.length - live, 'one "removed" event per removed row')
    assert.deepEqual(
      events,
      events.map((_, i) => i % 2 === 0),
    )

    // The next toggle flips what is stored, and its answer says so.
    const next = await chat.user(2).ok('toggle_message_reaction', { message_id: target.id, emoji: '🎉' })
    assert.equal(next.added, live === 0)
    const after = await reactionRows(target.id, 2)
    assert.equal(after.filter((row) => row.live).length, live === 0 ? 1 : 0)
    assert.deepEqual(next.message.reactions, live === 0 ? [{ emoji: '🎉', count: 1, mine: true }] : [])
  },
)

forEachDialect(
  'migration 0009 keeps the oldest of duplicate live reactions and every removed one',
  async (t, dialect) => {
    const database = await openTestDatabase<ChatDatabase>(t, dialect)
    const before = Object.fromEntries(Object.entries(chatMigrations).filter(([name]) => name < '0009'))
    await migrateToLatest(database, before)
    const reaction = (timetick: number, owner: number, emoji: string, flags = 0) => ({
      timetick,
      timetick_update: timetick,
      chat_id: 1,
      owner,
      content: emoji,
      flags,
      linked_message_id: 100,
      link_kind: LinkKind.Reaction,
      file_name: '',
      file_size: 0,
      forwarded_from: 0,
      edited: 0,
    })
    // Rows as the table was at 0008, before attachments had their columns (0010).
    const before0010 = database.db as unknown as Kysely<{ chat_mess: Omit<ChatMessTable, 'file_id' | 'file_type'> }>
    await before0010
      .insertInto('chat_mess')
      .values([
        reaction(101, 2, '👍', ChatMessFlags.Deleted),
        reaction(102, 2, '👍'),
        reaction(103, 2, '👍'),
        reaction(104, 2, '👍', ChatMessFlags.Deleted),
        reaction(105, 2, '👍'),
        reaction(106, 3, '👍'),
        reaction(107, 2, '❤️'),
      ])
      .execute()
    await migrateToLatest(database, chatMigrations)
    const ids = await database.db.selectFrom('chat_mess').select('timetick').orderBy('timetick').execute()
    assert.deepEqual(
      ids.map((row) => Number(row.timetick)),
      [101, 102, 104, 106, 107],
    )
    await assert.rejects(
      database.db
        .insertInto('chat_mess')
        .values({ ...reaction(108, 3, '👍'), file_id: 0, file_type: '' })
        .execute(),
      'a second live reaction is refused by the database',
    )
    await database.db
      .insertInto('chat_mess')
      .values({ ...reaction(109, 3, '👍', ChatMessFlags.Deleted), file_id: 0, file_type: '' })
      .execute()
  },
)
