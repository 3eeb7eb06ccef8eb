import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ChatMessFlags } from '@atrium/platform/flags'
import type { UserView } from '../../api/auth-api.ts'
import { chatView } from '../../api/chat-view-fixture.ts'
import { messageView } from '../../api/message-view-fixture.ts'
import { chatKind, lastEditable, previewText } from './names.ts'

test("a preview is the message's text, or its file's name when it has no caption", () => {
  assert.equal(previewText({ content: 'See the report', file: null }), 'See the report')
  const file = { id: '7', name: 'report.pdf', size: 10, type: 'application/pdf' }
  assert.equal(previewText({ content: '', file }), '📎 report.pdf')
  assert.equal(previewText({ content: 'Caption', file }), 'Caption')
  assert.equal(previewText({ content: '' }), '📎 Attachment', 'a reply preview names no file')
})

test('the up arrow edits the newest message of mine that may be edited', () => {
  const me: UserView = { crmId: '1001', name: 'Alice', scopes: [], contacts: [] }
  const chat = chatView('100')
  const messages = [
    messageView('1', { owner: '1001', content: 'mine, editable' }),
    messageView('2', { owner: '1001', flags: ChatMessFlags.Call }),
    messageView('3', { owner: '1001', deleted: true }),
    messageView('4', { owner: '1002' }),
  ]
  assert.equal(lastEditable(messages, chat, me)?.id, '1', 'calls, deleted and others’ messages are skipped')
  assert.equal(lastEditable([...messages, messageView('5', { owner: '1001' })], chat, me)?.id, '5')
  assert.equal(lastEditable(messages.slice(1), chat, me), undefined)
  assert.equal(
    lastEditable(messages, chatView('100', { archived: true }), me),
    undefined,
    'an archived chat is read-only',
  )
})

test('a chat’s kind counts its members in words that agree with the count', () => {
  assert.equal(chatKind(chatView('7', { type: 2, member_count: 1 })), 'Group · 1 member')
  assert.equal(chatKind(chatView('7', { type: 2, member_count: 3 })), 'Group · 3 members')
  assert.equal(chatKind(chatView('7', { type: 2, member_count: 1, context: 'discussion' })), 'Discussion · 1 member')
  assert.equal(chatKind(chatView('7', { type: 1, member_count: 2 })), 'Private chat')
})
