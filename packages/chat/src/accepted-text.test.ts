import assert from 'node:assert/strict'
import { createDatabase } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect } from '@atrium/platform/testing'
import { createGroup, startChatOn } from '../test/support.ts'
import type { ChatDatabase } from './db/schema.ts'

/** Rows of every table a chat operation writes, to show a refusal wrote nothing. */
async function countRows(db: ReturnType<typeof createDatabase<ChatDatabase>>['db']) {
  const counts: Record<string, number> = {}
  for (const table of ['chats', 'chat_members', 'chat_mess', 'chat_events', 'feedback', 'chat_profiles'] as const) {
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow()
    counts[table] = Number(row.n)
  }
  return counts
}

forEachDialect(
  'text with NUL or another refused control character is refused in every operation, writing nothing',
  async (t, dialect) => {
    const url = await createTestDatabaseUrl(t, dialect)
    const chat = await startChatOn(t, url)
    await chat.register(1, 2)
    const database = createDatabase<ChatDatabase>(url)
    t.after(() => database.destroy())
    const alice = chat.user(1)
    const groupId = await createGroup(alice, [2])
    const sent = await alice.ok('send_message', { chat_id: groupId, content: 'hello' })
    const before = await countRows(database.db)

    for (const bad of ['\u0000', 'a\u0000b', '\u0001', '\u001b[31m', '\u000b', '\u001f', '\ud800 lone']) {
      const attempts = [
        alice.post('create_chat', { type: 2, name: `team ${bad}` }),
        alice.post('create_chat', { type: 2, name: 'team', description: bad }),
        alice.post('update_chat', { chat_id: groupId, name: bad }),
        alice.post('update_chat', { chat_id: groupId, description: `about ${bad}` }),
        alice.post('send_message', { chat_id: groupId, content: `hi ${bad}` }),
        alice.post('send_message', { chat_id: groupId, content: '', widget: { rows: [{ title: bad }] } }),
        alice.post('send_message', { chat_id: groupId, content: '', widget: { [`key${bad}`]: 1 } }),
        alice.post('send_message', { chat_id: groupId, content: bad, reaction_to: sent.id }),
        alice.post('edit_message', { message_id: sent.id, content: `edited ${bad}` }),
        alice.post('toggle_message_reaction', { message_id: sent.id, emoji: `👍${bad}` }),
        alice.post('create_feedback', { object_type: 1, object_id: 'app', rating: 5, comment: bad }),
        alice.post('update_profile', { name: `Alice ${bad}` }),
        // A URL carries UTF-8, which has no lone surrogates: the client sends U+FFFD instead.
        ...(bad.isWellFormed()
          ? [alice.get('search_messages', { q: bad }), alice.get('search_messages', { q: `hel${bad}` })]
          : []),
      ]
      for (const [i, answer] of (await Promise.all(attempts)).entries()) {
        const what = `attempt ${i} with ${JSON.stringify(bad)}`
        assert.equal(answer.status, 400, `${what}: ${JSON.stringify(answer.error)}`)
        assert.equal(answer.error?.code, 1000, what)
        assert.match(
          answer.error?.message ?? '',
          /^(body|querystring)\/\S* .*(control characters|well-formed Unicode)/,
          what,
        )
        assert.equal(answer.result, undefined, what)
      }
    }

    assert.deepEqual(await countRows(database.db), before, 'nothing was written')
    const { messages } = await alice.read('get_chat_messages', { chat_id: groupId })
    assert.deepEqual(
      messages.map((message: { content: string; reactions: unknown[] }) => [message.content, message.reactions]),
      [['hello', []]],
    )
  },
)

forEachDialect('tab, line feed and carriage return are accepted and stored as sent', async (t, dialect) => {
  const url = await createTestDatabaseUrl(t, dialect)
  const chat = await startChatOn(t, url)
  await chat.register(1, 2)
  const alice = chat.user(1)
  const groupId = await createGroup(alice, [2], 2, 'Team\tA')
  const content = 'line one\r\nline two\n\tindented'
  const sent = await alice.ok('send_message', { chat_id: groupId, content })
  assert.equal(sent.content, content)
  const { messages } = await chat.user(2).read('get_chat_messages', { chat_id: groupId })
  assert.equal(messages[0].content, content)
  const found = await chat.user(2).read('search_messages', { q: 'two\n\tindented' })
  assert.deepEqual(
    found.messages.map((message: { id: string }) => message.id),
    [sent.id],
  )
  const info = await alice.read('get_chat_info', { chat_id: groupId })
  assert.equal(info.name, 'Team\tA')
})
