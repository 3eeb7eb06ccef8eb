import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { MessageView } from '../../api/chat-types.ts'
import { messageView } from '../../api/message-view-fixture.ts'
import type { BroadcastEvent } from '../../live-events.ts'
import { conversationReducer, EMPTY_CONVERSATION } from './conversation-state.ts'
import { applyMessageEvent, applyReaction, newestPinned } from './message-events.ts'

const ME = '1001'

// By someone other than ME.
const message = (id: string, fields: Partial<MessageView> = {}) => messageView(id, { owner: '1002', ...fields })

function event(type: string, data: Record<string, unknown>): BroadcastEvent {
  return { module: 'chat', tick: 900, type, data: { chat_id: '100', tick: '900', ...data } }
}

const reply = message('1003', {
  link_kind: 'reply',
  linked_message_id: '1001',
  reply_to: { id: '1001', owner: '1002', content: 'message 1001', deleted: false },
})

test('an edit changes the content, marks it edited and updates the previews of its replies', () => {
  const messages = [message('1001'), message('1002'), reply]
  const edited = applyMessageEvent(
    messages,
    event('MessageEdited', { message_id: '1001', content: 'x'.repeat(250) }),
    ME,
  )
  assert.equal(edited[0]?.content, 'x'.repeat(250))
  assert.equal(edited[0]?.edited, true)
  assert.equal(edited[1], messages[1])
  assert.equal(edited[2]?.reply_to?.content, 'x'.repeat(200))
})

test('a deletion, soft or hard, removes the message; replies show the original as deleted', () => {
  const pinned = message('1001', { pinned: true, flags: 2, reactions: [{ emoji: '👍', count: 1, mine: true }] })
  for (const hard of [false, true]) {
    const after = applyMessageEvent([pinned, reply], event('MessageDeleted', { message_id: '1001', hard }), ME)
    assert.deepEqual(
      after.map((m) => m.id),
      ['1003'],
    )
    assert.deepEqual(after[0]?.reply_to, { id: '1001', owner: '1002', content: '', deleted: true })
  }
})

test('pin and unpin set the mark and flag; the bar shows the newest pinned message', () => {
  const messages = [message('1001'), message('1002')]
  const pinned = applyMessageEvent(messages, event('MessagePinned', { message_id: '1001', by: '1002' }), ME)
  assert.equal(pinned[0]?.pinned, true)
  assert.equal(pinned[0]?.flags, 2)
  const both = applyMessageEvent(pinned, event('MessagePinned', { message_id: '1002', by: '1002' }), ME)
  assert.equal(newestPinned(both)?.id, '1002')
  const unpinned = applyMessageEvent(both, event('MessageUnpinned', { message_id: '1002', by: ME }), ME)
  assert.equal(unpinned[1]?.pinned, false)
  assert.equal(unpinned[1]?.flags, 0)
  assert.equal(newestPinned(unpinned)?.id, '1001')
})

test("others' reactions are counted; the caller's own is not counted twice after the server's answer", () => {
  let reactions = applyReaction([], '👍', true, false)
  assert.deepEqual(reactions, [{ emoji: '👍', count: 1, mine: false }])
  reactions = applyReaction(reactions, '🎉', true, true)
  reactions = applyReaction(reactions, '👍', true, true)
  assert.deepEqual(reactions, [
    { emoji: '🎉', count: 1, mine: true },
    { emoji: '👍', count: 2, mine: true },
  ])
  // The event of the caller's own toggle, after toggle_message_reaction already answered it.
  assert.equal(applyReaction(reactions, '👍', true, true), reactions)
  reactions = applyReaction(reactions, '👍', false, true)
  assert.deepEqual(reactions[1], { emoji: '👍', count: 1, mine: false })
  reactions = applyReaction(reactions, '👍', false, false)
  assert.deepEqual(reactions, [{ emoji: '🎉', count: 1, mine: true }])
  assert.equal(applyReaction(reactions, '😮', false, false), reactions)
})

test('the conversation applies events of loaded messages and ignores the rest', () => {
  const state = conversationReducer(EMPTY_CONVERSATION, { type: 'latest', messages: [message('1001')], hasMore: false })
  const reacted = conversationReducer(state, {
    type: 'event',
    event: event('ReactionChanged', { message_id: '1001', emoji: '❤️', by: '1002', added: true }),
    me: ME,
  })
  assert.deepEqual(reacted.messages[0]?.reactions, [{ emoji: '❤️', count: 1, mine: false }])
  const unknown = event('MessageEdited', { message_id: '999', content: 'elsewhere' })
  assert.equal(conversationReducer(reacted, { type: 'event', event: unknown, me: ME }), reacted)
  const other = event('MemberAdded', { member: '1003' })
  assert.equal(conversationReducer(reacted, { type: 'event', event: other, me: ME }), reacted)
})

test('a deleted message takes no reactions, pins or edits from late events', () => {
  const deleted = [message('1001', { deleted: true, content: '' })]
  for (const late of [
    event('MessageEdited', { message_id: '1001', content: 'late' }),
    event('MessagePinned', { message_id: '1001', by: '1002' }),
    event('ReactionChanged', { message_id: '1001', emoji: '👍', by: '1002', added: true }),
  ])
    assert.equal(applyMessageEvent(deleted, late, ME), deleted)
})

test('a call row follows its call: CallUpdated replaces the record it shows', () => {
  const ringing = {
    media: 'audio',
    state: 'ringing',
    caller: '1002',
    callee: ME,
    answered_at: '',
    ended_at: '',
    duration: 0,
    end_reason: '',
  }
  const row = message('1005', { flags: 512, content: JSON.stringify(ringing) })
  const ended = { ...ringing, state: 'ended', ended_at: '2026-11-26T10:00:45.000Z', end_reason: 'missed' }
  const after = applyMessageEvent(
    [message('1004'), row],
    event('CallUpdated', { call_id: '1005', started_at: '2026-11-26T10:00:00.000Z', ...ended }),
    ME,
  )
  assert.deepEqual(JSON.parse(after[1]!.content), ended)
  // The same record again changes nothing.
  const again = applyMessageEvent(after, event('CallUpdated', { call_id: '1005', ...ended }), ME)
  assert.equal(again, after)
})
