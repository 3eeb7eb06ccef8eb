import assert from 'node:assert/strict'
import { forEachDialect } from '@atrium/platform/testing'
import { type ChatCaller, createGroup, startChat } from '../../test/support.ts'

/** The contents of the messages a search finds, newest first. */
async function found(caller: ChatCaller, q: string, query: Record<string, string | number> = {}): Promise<string[]> {
  const { messages } = await caller.read('search_messages', { q, ...query })
  return messages.map((message: { content: string }) => message.content)
}

async function send(caller: ChatCaller, chatId: string, content: string): Promise<string> {
  return (await caller.ok('send_message', { chat_id: chatId, content })).id
}

forEachDialect('search finds a partial word in any case', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2])
  await send(chat.user(1), groupId, 'The Gateway is up')
  await send(chat.user(1), groupId, 'lunch at noon')
  assert.deepEqual(await found(chat.user(2), 'ateway'), ['The Gateway is up'])
  assert.deepEqual(await found(chat.user(2), 'GATEWAY'), ['The Gateway is up'])
  assert.deepEqual(await found(chat.user(2), 'Up'), ['The Gateway is up'], 'a two-letter word, any case')
  await send(chat.user(1), groupId, 'Да, конечно')
  assert.deepEqual(await found(chat.user(2), 'КОНЕЧНО'), ['Да, конечно'])
  assert.deepEqual(await found(chat.user(2), 'да'), ['Да, конечно'], 'a short non-ASCII word in another case')
})

forEachDialect('a one- or two-letter Cyrillic query finds its letters in any mix of cases', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2])
  const text = 'Портал ГосУслуги открыт'
  await send(chat.user(1), groupId, text)
  await send(chat.user(1), groupId, 'unrelated')
  const word = 'ГосУслуги'
  for (let i = 0; i < word.length; i++) {
    for (const length of [1, 2]) {
      const letters = [...word.slice(i, i + length)]
      if (letters.length < length) continue
      // Each letter lower or upper: every mix of cases of this piece of the word.
      for (let mask = 0; mask < 2 ** length; mask++) {
        const q = letters.map((letter, j) => (mask & (1 << j) ? letter.toUpperCase() : letter.toLowerCase())).join('')
        assert.deepEqual(await found(chat.user(2), q), [text], q)
      }
    }
  }
})

forEachDialect('search finds CJK text with one-, two- and three-character queries', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2])
  await send(chat.user(1), groupId, '東京タワーに行きました')
  await send(chat.user(1), groupId, '猫が好き')
  assert.deepEqual(await found(chat.user(2), '猫'), ['猫が好き'])
  assert.deepEqual(await found(chat.user(2), '東京'), ['東京タワーに行きました'])
  assert.deepEqual(await found(chat.user(2), '東京タワー'), ['東京タワーに行きました'])
  assert.deepEqual(await found(chat.user(2), '好き'), ['猫が好き'])
  assert.deepEqual(await found(chat.user(2), '京都'), [])
})

forEachDialect('every word of a multi-word query must appear', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2])
  await send(chat.user(1), groupId, 'deploy the gateway today')
  await send(chat.user(1), groupId, 'deploy tomorrow')
  await send(chat.user(1), groupId, 'gateway down')
  assert.deepEqual(await found(chat.user(2), 'gateway  deploy'), ['deploy the gateway today'])
  assert.deepEqual(await found(chat.user(2), 'deploy to'), ['deploy tomorrow', 'deploy the gateway today'])
  assert.deepEqual(await found(chat.user(2), 'down 猫'), [])
})

forEachDialect('messages of chats the caller does not belong to are never found', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const privateGroup = await createGroup(chat.user(1), [2])
  await send(chat.user(1), privateGroup, 'the zebra plan is secret')
  const ownGroup = await createGroup(chat.user(3), [])
  await send(chat.user(3), ownGroup, 'zebra crossing')
  assert.deepEqual(await found(chat.user(3), 'secret'), [])
  assert.deepEqual(await found(chat.user(3), 'zebra'), ['zebra crossing'])
  assert.deepEqual(await found(chat.user(3), 'z'), ['zebra crossing'], 'the short-query path is restricted too')
  assert.deepEqual(await found(chat.user(4), 'zebra'), [], 'a user in no chat finds nothing')
  assert.deepEqual(await found(chat.user(2), 'zebra'), ['the zebra plan is secret'])
})

forEachDialect('soft-deleted messages are not found', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2])
  const id = await send(chat.user(1), groupId, 'regrettable remark 号')
  assert.deepEqual(await found(chat.user(2), 'regrettable'), ['regrettable remark 号'])
  await chat.user(1).ok('soft_delete_message', { message_id: id })
  assert.deepEqual(await found(chat.user(2), 'regrettable'), [])
  assert.deepEqual(await found(chat.user(2), '号'), [])
})

forEachDialect('an edited message is found by its new text, not its old', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2])
  const id = await send(chat.user(1), groupId, 'original wording')
  await chat.user(1).ok('edit_message', { message_id: id, content: 'revised phrasing' })
  assert.deepEqual(await found(chat.user(2), 'original'), [])
  assert.deepEqual(await found(chat.user(2), 'phrasing'), ['revised phrasing'])
})

forEachDialect('reactions are ordinary rows and are found', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2])
  const id = await send(chat.user(1), groupId, 'ship it')
  await chat.user(2).ok('toggle_message_reaction', { message_id: id, emoji: '🚀' })
  const { messages } = await chat.user(1).read('search_messages', { q: '🚀' })
  assert.equal(messages.length, 1)
  assert.equal(messages[0].link_kind, 'reaction')
  assert.equal(messages[0].linked_message_id, id)
})

forEachDialect('search syntax in the query is matched literally', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2])
  const tricky = 'say "hi" AND NEAR(x, y) content:draft 100% a_b c\\d x*y ^top'
  await send(chat.user(1), groupId, tricky)
  await send(chat.user(1), groupId, 'plain aXb text and hi there')
  const literal = ['"hi"', '"', 'AND NEAR(', 'NEAR(x,', 'content:draft', 'content:', '100%', '%', '_', 'a_b', '\\']
  for (const q of [...literal, 'c\\d', 'x*y', '*', '^top', '(', ')']) {
    assert.deepEqual(await found(chat.user(2), q), [tricky], q)
  }
  for (const q of ['""', '"""', 'OR', 'NOT', 'a%b', '_b_', 'c\\\\d'])
    assert.deepEqual(await found(chat.user(2), q), [], q)
  assert.deepEqual(await found(chat.user(2), 'hi'), ['plain aXb text and hi there', tricky])
})

forEachDialect('chat_id restricts the search to that chat, which the caller must belong to', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const first = await createGroup(chat.user(1), [2])
  const second = await createGroup(chat.user(1), [2])
  await send(chat.user(1), first, 'report for the first team')
  await send(chat.user(1), second, 'report for the second team')
  assert.deepEqual(await found(chat.user(2), 'report', { chat_id: second }), ['report for the second team'])
  const outsider = await chat.user(3).get('search_messages', { q: 'report', chat_id: first })
  assert.equal(outsider.status, 404)
  assert.equal(outsider.error?.code, 3000)
})

forEachDialect('paging with before returns the next older results', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2])
  for (const n of [1, 2, 3, 4, 5]) {
    await send(chat.user(1), groupId, `status update ${n}`)
    await send(chat.user(1), groupId, `unrelated ${n}`)
  }
  const first = await chat.user(2).read('search_messages', { q: 'status', limit: 2 })
  assert.deepEqual(
    first.messages.map((message: { content: string }) => message.content),
    ['status update 5', 'status update 4'],
  )
  assert.equal(first.has_more, true)
  const second = await chat.user(2).read('search_messages', { q: 'status', limit: 2, before: first.messages[1].id })
  assert.deepEqual(
    second.messages.map((message: { content: string }) => message.content),
    ['status update 3', 'status update 2'],
  )
  assert.equal(second.has_more, true)
  const last = await chat.user(2).read('search_messages', { q: 'status', limit: 2, before: second.messages[1].id })
  assert.deepEqual(
    last.messages.map((message: { content: string }) => message.content),
    ['status update 1'],
  )
  assert.equal(last.has_more, false)
})

forEachDialect('an empty or blank query is an invalid request', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  for (const q of ['', '   ', '\t']) {
    const response = await chat.user(1).get('search_messages', { q })
    assert.equal(response.status, 400, JSON.stringify(q))
    assert.equal(response.error?.code, 1000)
  }
  const tooLong = await chat.user(1).get('search_messages', { q: 'x'.repeat(201) })
  assert.equal(tooLong.error?.code, 1000)
})

forEachDialect('guests cannot search', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  await chat.register(1, 2, 3, 4)
  const groupId = await createGroup(chat.user(1), [2])
  await send(chat.user(1), groupId, 'welcome, guests')
  const { code } = await chat.user(1).ok('create_invite', { kind: 'group', chat_id: groupId })
  const guest = chat.guest(code, 'guest-device-0001')
  await guest.ok('join_invite', { code })
  const response = await guest.get('search_messages', { q: 'welcome' })
  assert.equal(response.status, 403)
  assert.equal(response.error?.code, 3007)
})
