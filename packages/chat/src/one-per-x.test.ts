import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { ChatType, createDatabase, type DatabaseDialect } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect } from '@atrium/platform/testing'
import { type ChatClient, createGroup, startChatOn } from '../test/support.ts'
import type { ChatDatabase } from './db/schema.ts'

/**
 * "One per X" rules of the chat module under parallel requests, checked against the stored rows
 * (issue 14): the database must hold them, not a read before the write, so PostgreSQL's
 * concurrent writers are the real test (SQLite's single writer hides the race).
 */
const PARALLEL = 12

/** The chat module and a connection of its own to the same database, to count the stored rows. */
async function startWithDatabase(t: TestContext, dialect: DatabaseDialect) {
  const url = await createTestDatabaseUrl(t, dialect)
  const chat = await startChatOn(t, url)
  await chat.register(1, 101, 202, 303)
  const database = createDatabase<ChatDatabase>(url)
  t.after(() => database.destroy())
  return { chat, db: database.db }
}

/** Opens a connection per parallel request first, so the burst is not spread out by connection set-up. */
async function inParallel<T>(chat: ChatClient, request: (index: number) => Promise<T>): Promise<T[]> {
  await Promise.all(Array.from({ length: PARALLEL }, () => chat.user(1).read('get_chats')))
  return Promise.all(Array.from({ length: PARALLEL }, (_, index) => request(index)))
}

forEachDialect('parallel create_private_chat from both sides stores one chat with two members', async (t, dialect) => {
  const { chat, db } = await startWithDatabase(t, dialect)
  const answers = await inParallel(chat, (index) =>
    index % 2 === 0
      ? chat.user(101).post('create_private_chat', { peer: '202' })
      : chat.user(202).post('create_private_chat', { peer: '101' }),
  )
  assert.deepEqual(new Set(answers.map((answer) => answer.status)), new Set([200]))

  const stored = await db
    .selectFrom('chats')
    .innerJoin('chat_members', 'chat_members.chat_id', 'chats.timetick')
    .select(['chats.timetick as id', 'chat_members.member'])
    .where('chats.type', '=', ChatType.Private)
    .execute()
  assert.equal(new Set(stored.map((row) => row.id)).size, 1, 'one private chat for the pair')
  assert.deepEqual(stored.map((row) => row.member).sort(), [101, 202], 'with each of the two once')
})

forEachDialect('a guest joining in parallel on one device is one guest and one member', async (t, dialect) => {
  const { chat, db } = await startWithDatabase(t, dialect)
  const group = await createGroup(chat.user(1), [])
  const invite = await chat.user(1).ok('create_invite', { kind: 'group', chat_id: group })
  const answers = await inParallel(chat, () =>
    chat.guest(invite.code, 'device-one-1234').post('join_invite', { code: invite.code }),
  )
  assert.deepEqual(new Set(answers.map((answer) => answer.status)), new Set([200]))

  const guests = await db.selectFrom('guests').select(['timetick', 'chat_id']).where('code', '=', invite.code).execute()
  assert.equal(guests.length, 1, 'one guest row for the code and device')
  const members = await db
    .selectFrom('chat_members')
    .select('member')
    .where('chat_id', '=', Number(group))
    .where('member', '!=', 1)
    .execute()
  assert.equal(members.length, 1, 'the guest is a member once')
})

forEachDialect('adding one user to a chat in parallel makes one membership', async (t, dialect) => {
  const { chat, db } = await startWithDatabase(t, dialect)
  const group = await createGroup(chat.user(1), [])
  const answers = await inParallel(chat, () => chat.user(1).post('add_chat_member', { chat_id: group, member: '303' }))
  assert.ok(
    answers.some((answer) => answer.status === 200),
    JSON.stringify(answers.map((answer) => answer.error)),
  )
  for (const answer of answers) {
    assert.ok(
      answer.status === 200 || answer.status === 409,
      `each answer is the member or a conflict: ${answer.status}`,
    )
  }
  const rows = await db
    .selectFrom('chat_members')
    .select('member')
    .where('chat_id', '=', Number(group))
    .where('member', '=', 303)
    .execute()
  assert.equal(rows.length, 1)
})
