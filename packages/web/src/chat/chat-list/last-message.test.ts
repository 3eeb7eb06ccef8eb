import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ChatMessFlags } from '@atrium/platform/flags'
import type { ChatView, LastMessagePreview } from '../../api/chat-types.ts'
import { chatView } from '../../api/chat-view-fixture.ts'
import type { BroadcastEvent } from '../../live-events.ts'
import { type ChatListState, chatListReducer, EMPTY_CHAT_LIST } from './chat-list-state.ts'
import { previewBody, previewSender } from './last-message.ts'

/** A group of three without messages. */
const chat = (id: string, fields: Partial<ChatView> = {}) =>
  chatView(id, { type: 2, peer: '0', role: 0, member_count: 3, ...fields })

function preview(id: string, fields: Partial<LastMessagePreview> = {}): LastMessagePreview {
  return {
    id,
    sender: '1002',
    sender_name: 'Bob',
    content: `message ${id}`,
    file_name: '',
    flags: 0,
    edited: false,
    time: '2026-11-22T06:16:50.231Z',
    ...fields,
  }
}

const on = (state: ChatListState, event: BroadcastEvent) =>
  chatListReducer(state, { type: 'event', event, me: '1001', openChatId: undefined })

function loaded(...chats: ChatView[]): ChatListState {
  return chatListReducer(EMPTY_CHAT_LIST, { type: 'loaded', chats })
}

test('a new message becomes the preview, with a name the list already knows for its sender', () => {
  const state = loaded(
    chat('100', { last_message: '500', last_message_preview: preview('500') }),
    chat('200', { last_message: '400', last_message_preview: preview('400', { sender: '1003', sender_name: '' }) }),
  )
  const next = on(state, {
    module: 'chat',
    tick: 601,
    type: 'NewChatMessage',
    data: {
      chat_id: '200',
      message_id: '600',
      sender: '1002',
      content: `line one\nline two ${'x'.repeat(300)}`,
      flags: ChatMessFlags.File,
      file: { id: '9', name: 'plan.pdf', size: 3, type: '' },
      time: '2026-11-25T10:00:00.000Z',
    },
  })
  const moved = next.chats[0]!
  assert.equal(moved.id, '200')
  assert.deepEqual(moved.last_message_preview, {
    id: '600',
    sender: '1002',
    sender_name: 'Bob',
    content: `line one\nline two ${'x'.repeat(300)}`.slice(0, 200),
    file_name: 'plan.pdf',
    flags: ChatMessFlags.File,
    edited: false,
    time: '2026-11-25T10:00:00.000Z',
  })
})

test('an edit of the previewed message changes its text; other edits change nothing', () => {
  const state = loaded(chat('100', { last_message: '500', last_message_preview: preview('500') }))
  const edit = (messageId: string): BroadcastEvent => ({
    module: 'chat',
    tick: 700,
    type: 'MessageEdited',
    data: { chat_id: '100', message_id: messageId, content: 'fixed typo' },
  })
  const edited = on(state, edit('500')).chats[0]!.last_message_preview
  assert.equal(edited?.content, 'fixed typo')
  assert.equal(edited?.edited, true)
  assert.deepEqual(on(state, edit('499')).chats, state.chats)
})

test('deleting the previewed message asks the server for that chat alone', () => {
  const state = loaded(chat('100', { last_message: '500', last_message_preview: preview('500') }), chat('200'))
  const deleted = (messageId: string): BroadcastEvent => ({
    module: 'chat',
    tick: 701,
    type: 'MessageDeleted',
    data: { chat_id: '100', message_id: messageId, hard: false },
  })
  const next = on(state, deleted('500'))
  assert.deepEqual(next.refetch, ['100'])
  assert.equal(next.reload, false, 'not the whole list')
  assert.deepEqual(on(state, deleted('450')).refetch, [], 'an older message leaves the preview as it is')
})

test('a row names the sender in groups and oneself everywhere, and says what a message without text is', () => {
  const group = chat('100')
  const direct = chat('200', { type: 1, peer: '1002' })
  assert.equal(previewSender(group, preview('1'), '1001'), 'Bob')
  assert.equal(previewSender(group, preview('1', { sender_name: '' }), '1001'), 'User 1002')
  assert.equal(previewSender(direct, preview('1'), '1001'), '', 'the chat is named after the peer already')
  assert.equal(previewSender(direct, preview('1', { sender: '1001' }), '1001'), 'You')
  assert.equal(previewBody(preview('1', { content: '  two\n\nlines ' })), 'two lines')
  assert.equal(previewBody(preview('1', { content: '', file_name: 'a.png', flags: ChatMessFlags.File })), '📎 a.png')
  const call = JSON.stringify({
    media: 'audio',
    state: 'ended',
    caller: '1',
    callee: '2',
    answered_at: '',
    ended_at: '',
    duration: 0,
    end_reason: 'missed',
  })
  assert.equal(previewBody(preview('1', { content: call, flags: ChatMessFlags.Call }), '2'), '📞 Missed call')
  assert.equal(previewBody(preview('1', { content: call, flags: ChatMessFlags.Call }), '1'), '📞 Call: no answer')
  assert.equal(previewBody(preview('1', { content: 'look', file_name: 'a.png', flags: ChatMessFlags.File })), '📎 look')
  assert.equal(previewBody(preview('1', { content: '', flags: ChatMessFlags.Widget })), 'Widget')
  assert.equal(previewBody(preview('1', { content: '', flags: ChatMessFlags.Call })), '📞 Call')
})
