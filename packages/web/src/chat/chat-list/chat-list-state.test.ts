import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ChatView } from '../../api/chat-types.ts'
import { chatView } from '../../api/chat-view-fixture.ts'
import type { BroadcastEvent } from '../../live-events.ts'
import {
  type ChatListState,
  chatListReducer,
  compareIds,
  EMPTY_CHAT_LIST,
  orderChats,
  unreadOutsideMuted,
} from './chat-list-state.ts'

const chat = chatView

const message = (chatId: string, messageId: string, sender: string): BroadcastEvent => ({
  module: 'chat',
  tick: Number(messageId) + 1,
  type: 'NewChatMessage',
  data: { chat_id: chatId, message_id: messageId, sender, content: 'hi' },
})

function loaded(...chats: ChatView[]): ChatListState {
  return chatListReducer(EMPTY_CHAT_LIST, { type: 'loaded', chats })
}

test('ids compare as the numbers they are', () => {
  assert.ok(compareIds('999', '1000') < 0)
  assert.ok(compareIds('890844816306176', '890844816171008') > 0)
  assert.equal(compareIds('42', '42'), 0)
})

test('pinned chats come first, then the newest activity', () => {
  const order = orderChats([
    chat('100', { last_message: '500' }),
    chat('200'),
    chat('300', { last_message: '400', pinned: true }),
  ]).map((c) => c.id)
  assert.deepEqual(order, ['300', '100', '200'])
})

test('a message from the peer moves the chat up and counts as unread unless the chat is open', () => {
  const state = loaded(chat('100', { last_message: '500' }), chat('200', { last_message: '400' }))
  const event = message('200', '600', '1002')
  const closed = chatListReducer(state, { type: 'event', event, me: '1001', openChatId: undefined })
  assert.deepEqual(
    closed.chats.map((c) => [c.id, c.unread, c.last_message]),
    [
      ['200', 1, '600'],
      ['100', 0, '500'],
    ],
  )
  const open = chatListReducer(state, { type: 'event', event, me: '1001', openChatId: '200' })
  assert.equal(open.chats[0]?.unread, 0)
  const own = chatListReducer(state, {
    type: 'event',
    event: message('200', '600', '1001'),
    me: '1001',
    openChatId: undefined,
  })
  assert.equal(own.chats[0]?.unread, 0)
})

test('events of chats the list does not know ask for a reload or a refetch', () => {
  const state = loaded(chat('100'))
  const unknown = chatListReducer(state, {
    type: 'event',
    event: message('999', '600', '1002'),
    me: '1001',
    openChatId: undefined,
  })
  assert.equal(unknown.reload, true)
  const created: BroadcastEvent = { module: 'chat', tick: 9, type: 'ChatCreated', data: { chat_id: '777', type: 1 } }
  const next = chatListReducer(state, { type: 'event', event: created, me: '1001', openChatId: undefined })
  assert.deepEqual(next.refetch, ['777'])
  assert.deepEqual(chatListReducer(next, { type: 'refetched', chatIds: ['777'] }).refetch, [])
})

test('our own read elsewhere refetches the chat; a removal takes it off the list', () => {
  const state = loaded(chat('100', { unread: 3 }), chat('200'))
  const read: BroadcastEvent = {
    module: 'chat',
    tick: 5,
    type: 'MessageRead',
    data: { chat_id: '100', reader: '1001' },
  }
  assert.deepEqual(chatListReducer(state, { type: 'event', event: read, me: '1001', openChatId: undefined }).refetch, [
    '100',
  ])
  assert.deepEqual(
    chatListReducer(state, { type: 'event', event: read, me: '1002', openChatId: undefined }).refetch,
    [],
  )
  const removed: BroadcastEvent = {
    module: 'chat',
    tick: 6,
    type: 'MemberRemoved',
    data: { chat_id: '200', member: '1001' },
  }
  const after = chatListReducer(state, { type: 'event', event: removed, me: '1001', openChatId: undefined })
  assert.deepEqual(
    after.chats.map((c) => c.id),
    ['100'],
  )
  assert.equal(chatListReducer(state, { type: 'read', chatId: '100', unread: 0 }).chats[0]?.unread, 0)
})

test('events of other modules leave the list alone', () => {
  const state = loaded(chat('100'))
  const wallet: BroadcastEvent = { module: 'wallet', tick: 1, type: 'BalanceChanged', data: { chat_id: '100' } }
  assert.equal(chatListReducer(state, { type: 'event', event: wallet, me: '1001', openChatId: undefined }), state)
})

test('a message event older than the last message leaves the last message and the order', () => {
  const state = loaded(chat('100', { last_message: '650' }), chat('200', { last_message: '700' }))
  // A replayed or late event (SSE reconnect with since) of a message before the chat's newest.
  const late = chatListReducer(state, {
    type: 'event',
    event: message('200', '600', '1002'),
    me: '1001',
    openChatId: undefined,
  })
  assert.deepEqual(
    late.chats.map((c) => [c.id, c.last_message]),
    [
      ['200', '700'],
      ['100', '650'],
    ],
  )
})

test('a message the fetched view already counts is not counted again when its event arrives late', () => {
  // Bob's list learned of the new chat (ChatCreated, then get_chat_info) after Alice's first
  // message was posted: the view counts it as unread and names it as the last message.
  const fetched = loaded(chat('100', { unread: 1, last_message: '650' }))
  const event = { type: 'event' as const, me: '1001', openChatId: undefined }
  const late = chatListReducer(fetched, { ...event, event: message('100', '650', '1002') })
  assert.equal(late.chats[0]!.unread, 1)
  const next = chatListReducer(late, { ...event, event: message('100', '651', '1002') })
  assert.equal(next.chats[0]!.unread, 2)
})

test('deleting a message in a chat with unread messages refetches its count', () => {
  const state = loaded(chat('100', { unread: 2, last_message: '500' }), chat('200'))
  const deleted: BroadcastEvent = {
    module: 'chat',
    tick: 7,
    type: 'MessageDeleted',
    data: { chat_id: '100', message_id: '500', hard: false },
  }
  const next = chatListReducer(state, { type: 'event', event: deleted, me: '1001', openChatId: undefined })
  assert.deepEqual(next.refetch, ['100'], 'only the server knows whether the deleted message was unread')
  const refetched = chatListReducer(next, { type: 'upsert', chat: chat('100', { unread: 1, last_message: '400' }) })
  assert.deepEqual(
    chatListReducer(refetched, { type: 'refetched', chatIds: ['100'] }).chats.map((c) => [c.id, c.unread]),
    [
      ['100', 1],
      ['200', 0],
    ],
  )
})

test('a call row in the preview follows its call', () => {
  const record = {
    media: 'video',
    state: 'ringing',
    caller: '1002',
    callee: '1001',
    answered_at: '',
    ended_at: '',
    duration: 0,
    end_reason: '',
  }
  const preview = {
    id: '7001',
    sender: '1002',
    sender_name: '',
    content: JSON.stringify(record),
    file_name: '',
    flags: 512,
    edited: false,
    time: '2026-11-26T10:00:00.000Z',
  }
  const state = loaded(chat('100', { last_message: '7001', last_message_preview: preview }))
  const ended = {
    ...record,
    state: 'ended',
    answered_at: '2026-11-26T10:00:05.000Z',
    duration: 151,
    end_reason: 'completed',
  }
  const updated: BroadcastEvent = {
    module: 'chat',
    tick: 7002,
    type: 'CallUpdated',
    data: { call_id: '7001', chat_id: '100', started_at: preview.time, ...ended },
  }
  const after = chatListReducer(state, { type: 'event', event: updated, me: '1001', openChatId: undefined })
  assert.deepEqual(JSON.parse(after.chats[0]!.last_message_preview!.content), ended)
  // Another call of the chat, not the previewed one, leaves it.
  const other = { ...updated, data: { ...updated.data, call_id: '6999' } }
  assert.deepEqual(
    chatListReducer(state, { type: 'event', event: other, me: '1001', openChatId: undefined }).chats,
    state.chats,
  )
})

/** The state after `event`, as the messenger dispatches it for the signed-in 1001. */
const after = (state: ChatListState, event: BroadcastEvent) =>
  chatListReducer(state, { type: 'event', event, me: '1001', openChatId: undefined })

const deleted = (chatId: string, messageId: string): BroadcastEvent => ({
  module: 'chat',
  tick: Number(messageId) + 10,
  type: 'MessageDeleted',
  data: { chat_id: chatId, message_id: messageId },
})

test('an answer asked for before a message event does not undo it', () => {
  const start = loaded(chat('100'), chat('200', { last_message: '400' }))
  // The chat's view is asked for; our own message and a peer's in another chat arrive before the answer.
  const since = start.seq
  const live = after(after(start, message('100', '900', '1001')), message('200', '950', '1002'))
  const stale = chat('100')
  const upserted = chatListReducer(live, { type: 'upsert', chat: stale, since })
  assert.deepEqual(
    upserted.chats.map((c) => [c.id, c.last_message, c.unread]),
    [
      ['200', '950', 1],
      ['100', '900', 0],
    ],
  )
  assert.equal(upserted.chats.find((c) => c.id === '100')?.last_message_preview?.id, '900')
  // The whole list, asked for before both: both messages stay, the peer's counted once.
  const reloaded = chatListReducer(live, {
    type: 'loaded',
    chats: [chat('100'), chat('200', { last_message: '400' })],
    since,
  })
  assert.deepEqual(
    reloaded.chats.map((c) => [c.id, c.last_message, c.unread]),
    [
      ['200', '950', 1],
      ['100', '900', 0],
    ],
  )
  // Without `since` an answer stands as it is.
  assert.equal(
    chatListReducer(live, { type: 'upsert', chat: stale }).chats.find((c) => c.id === '100')?.last_message,
    '0',
  )
})

test('a deleted last message: an answer asked for after it stands, one asked for before it is asked again', () => {
  const shown = (id: string) => ({
    id,
    sender: '1001',
    sender_name: '',
    content: `message ${id}`,
    file_name: '',
    flags: 0,
    edited: false,
    time: '2026-11-26T10:00:00.000Z',
  })
  const start = loaded(chat('100', { last_message: '900', last_message_preview: shown('900') }))
  const before = start.seq
  const live = chatListReducer(after(start, deleted('100', '900')), { type: 'refetched', chatIds: ['100'] })
  const since = live.seq
  const current = chat('100', { last_message: '800', last_message_preview: shown('800') })
  const upserted = chatListReducer(live, { type: 'upsert', chat: current, since })
  assert.deepEqual([upserted.chats[0]?.last_message, upserted.refetch], ['800', []])
  // Read before the delete, the answer still shows the deleted message: the delete asks for the chat again.
  const stale = chat('100', { last_message: '900', last_message_preview: shown('900') })
  assert.deepEqual(chatListReducer(live, { type: 'upsert', chat: stale, since: before }).refetch, ['100'])
})

test('an answer older than the events kept is fetched again rather than trusted', () => {
  let live = loaded(chat('100'), chat('200'))
  const since = live.seq
  for (let index = 0; index < 250; index++) live = after(live, message('200', String(1000 + index), '1001'))
  assert.equal(live.log.length, 200)
  assert.equal(chatListReducer(live, { type: 'loaded', chats: [chat('100'), chat('200')], since }).reload, true)
  assert.deepEqual(chatListReducer(live, { type: 'upsert', chat: chat('100'), since }).refetch, ['100'])
})

test('the tab counts unread messages outside the chats muted at the moment', () => {
  const now = Date.parse('2026-12-07T12:00:00Z')
  const chats = [
    chatView('1', { unread: 2 }),
    chatView('2', { unread: 5, muted: true }),
    chatView('3', { unread: 3, muted: true, muted_until: '2026-12-07T11:00:00Z' }),
    chatView('4', { unread: 7, muted: true, muted_until: '2026-12-07T13:00:00Z' }),
    chatView('5', { unread: 0 }),
  ]
  assert.equal(unreadOutsideMuted(chats, now), 5)
  assert.equal(unreadOutsideMuted([], now), 0)
})
