import assert from 'node:assert/strict'
import { test } from 'node:test'
import { messageView } from '../../api/message-view-fixture.ts'
import { firstUnreadId } from './unread-marker.ts'

const ME = '1001'
const OTHER = '1002'

test('the marker goes before the oldest of the unread messages by others, skipping mine and deleted ones', () => {
  const messages = [
    messageView('1', { owner: OTHER }),
    messageView('2', { owner: OTHER }),
    messageView('3', { owner: ME }),
    messageView('4', { owner: OTHER, deleted: true }),
    messageView('5', { owner: OTHER }),
  ]
  assert.equal(firstUnreadId(messages, 0, ME), undefined)
  assert.equal(firstUnreadId(messages, 1, ME), '5')
  // Two unread: 5 and 2 (3 is mine, 4 deleted, neither counted).
  assert.equal(firstUnreadId(messages, 2, ME), '2')
  // More unread than the page holds: the oldest unread message the page has.
  assert.equal(firstUnreadId(messages, 10, ME), '1')
  assert.equal(firstUnreadId([messageView('7', { owner: ME })], 3, ME), undefined)
})
