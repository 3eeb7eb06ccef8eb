import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { MessageView } from '../../api/chat-types.ts'
import { messageView } from '../../api/message-view-fixture.ts'
import { conversationRows, GROUP_GAP_MS } from './message-groups.ts'

const now = new Date(2026, 10, 25, 18, 0)

function at(id: string, owner: string, time: Date): MessageView {
  return messageView(id, { owner, time: time.toISOString() })
}

function shape(messages: MessageView[]) {
  return conversationRows(messages, now, 'en-GB').map((row) =>
    row.kind === 'day' ? `— ${row.label}` : `${row.message.id}${row.continued ? ' (continued)' : ''}`,
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

test('an empty conversation has no rows', () => {
  assert.deepEqual(conversationRows([], now), [])
})
