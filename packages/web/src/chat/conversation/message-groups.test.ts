import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { MessageView } from '../../api/chat-types.ts'
import { messageView } from '../../api/message-view-fixture.ts'
import { conversationRows, GROUP_GAP_MS } from './message-groups.ts'

const now = new Date(2026, 10, 25, 18, 0)

function at(id: string, owner: string, time: Date): MessageView {
  return messageView(id, { owner, time: time.toISOString() })
}

function shape(messages: MessageView[], unreadFrom?: string) {
  return conversationRows(messages, { unreadFrom, now, locale: 'en-GB' }).map((row) =>
    row.kind === 'day'
      ? `— ${row.label}`
      : row.kind === 'unread'
        ? '— New messages'
        : `${row.message.id}${row.continued ? ' (continued)' : ''}`,
  )
}

test('a separator opens each day and consecutive messages of one sender group within the gap', () => {
  const nine = new Date(2026, 10, 23, 9, 0).getTime()
  const rows = shape([
    at('1', 'alice', new Date(nine)),
    at('2', 'alice', new Date(nine + GROUP_GAP_MS - 1000)),
    at('3', 'bob', new Date(nine + GROUP_GAP_MS)),
    at('4', 'alice', new Date(nine + GROUP_GAP_MS + 1000)),
    at('5', 'alice', new Date(nine + 3 * GROUP_GAP_MS)),
    at('6', 'alice', new Date(2026, 10, 24, 23, 58)),
    at('7', 'alice', new Date(2026, 10, 25, 0, 1)),
    at('8', 'alice', new Date(2026, 10, 25, 0, 2)),
  ])
  assert.deepEqual(rows, [
    '— Monday',
    '1',
    '2 (continued)',
    '3',
    '4',
    '5',
    '— Yesterday',
    '6',
    '— Today',
    '7',
    '8 (continued)',
  ])
})

test('the "New messages" line goes before the first unread message, which starts a group of its own', () => {
  const nine = new Date(2026, 10, 25, 9, 0).getTime()
  const messages = [
    at('1', 'bob', new Date(nine)),
    at('2', 'bob', new Date(nine + 1000)),
    at('3', 'bob', new Date(nine + 2000)),
  ]
  assert.deepEqual(shape(messages, '2'), ['— Today', '1', '— New messages', '2', '3 (continued)'])
  assert.deepEqual(shape(messages, '1'), ['— Today', '— New messages', '1', '2 (continued)', '3 (continued)'])
  assert.deepEqual(shape(messages, '9'), ['— Today', '1', '2 (continued)', '3 (continued)'], 'a marker not loaded')
})

test('an empty conversation has no rows', () => {
  assert.deepEqual(conversationRows([], { now }), [])
})
