import assert from 'node:assert/strict'
import { test } from 'node:test'
import { messageView } from '../../api/message-view-fixture.ts'
import {
  behindList,
  conversationReducer,
  EMPTY_CONVERSATION,
  mergeMessages,
  newestId,
  oldestId,
} from './conversation-state.ts'

const message = (id: string, content = `message ${id}`, update = id) =>
  messageView(id, { content, timetick_update: update })

test('pages arrive newest first and are kept oldest first', () => {
  const first = conversationReducer(EMPTY_CONVERSATION, {
    type: 'latest',
    messages: [message('1005'), message('1004')],
    hasMore: true,
  })
  assert.deepEqual(
    first.messages.map((m) => m.id),
    ['1004', '1005'],
  )
  assert.equal(first.hasOlder, true)
  assert.equal(oldestId(first), '1004')
  const older = conversationReducer(first, {
    type: 'older',
    messages: [message('1003'), message('999')],
    hasMore: false,
  })
  assert.deepEqual(
    older.messages.map((m) => m.id),
    ['999', '1003', '1004', '1005'],
  )
  assert.equal(older.hasOlder, false)
  assert.equal(newestId(older), '1005')
})

test('a message that arrives twice (sent, then caught up) is kept once', () => {
  const state = conversationReducer(EMPTY_CONVERSATION, { type: 'latest', messages: [message('1001')], hasMore: false })
  const sent = conversationReducer(state, { type: 'newer', messages: [message('1002')] })
  const caughtUp = conversationReducer(sent, { type: 'newer', messages: [message('1002'), message('1003')] })
  assert.deepEqual(
    caughtUp.messages.map((m) => m.id),
    ['1001', '1002', '1003'],
  )
})

test('the later view of a message wins, an older one never overwrites it', () => {
  const edited = message('1001', 'edited', '1009')
  assert.equal(mergeMessages([message('1001')], [edited])[0]?.content, 'edited')
  assert.equal(mergeMessages([edited], [message('1001')])[0]?.content, 'edited')
})

test('a message sent before the first page arrives stays when the page comes', () => {
  // A fresh chat: the page was asked for before the message existed, and answers after its send.
  const sent = conversationReducer(EMPTY_CONVERSATION, { type: 'newer', messages: [message('1002')] })
  const loaded = conversationReducer(sent, { type: 'latest', messages: [message('1001')], hasMore: false })
  assert.deepEqual(
    loaded.messages.map((m) => m.id),
    ['1001', '1002'],
  )
  assert.equal(loaded.loaded, true)
})

test('a first page is behind the list when the list knows a newer last message', () => {
  const page = conversationReducer(EMPTY_CONVERSATION, {
    type: 'latest',
    messages: [message('1005'), message('998')],
    hasMore: false,
  })
  assert.equal(behindList(page, '1006'), true)
  // Ids compare as numbers: 10000 is newer than 1005 though it sorts before it as text.
  assert.equal(behindList(page, '10000'), true)
  assert.equal(behindList(page, '1005'), false)
  assert.equal(behindList(page, '999'), false)
  // "0": the chat has no message; an empty page is behind any message.
  assert.equal(behindList(page, '0'), false)
  const empty = conversationReducer(EMPTY_CONVERSATION, { type: 'latest', messages: [], hasMore: false })
  assert.equal(behindList(empty, '0'), false)
  assert.equal(behindList(empty, '1'), true)
})
