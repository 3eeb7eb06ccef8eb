import assert from 'node:assert/strict'
import { test } from 'node:test'
import { messageView } from '../api/message-view-fixture.ts'
import { addFilePage, EMPTY_CHAT_FILES, olderCursor } from './chat-files.ts'

const withFile = (id: string) =>
  messageView(id, { flags: 1, content: '', file: { id: `f${id}`, name: `${id}.png`, size: 10, type: 'image/png' } })

test('pages add up newest first, and the cursor is the oldest listed', () => {
  const first = addFilePage(EMPTY_CHAT_FILES, { files: [withFile('30'), withFile('20')], has_more: true })
  assert.deepEqual([first.loaded, first.hasMore, olderCursor(first)], [true, true, '20'])
  const both = addFilePage(first, { files: [withFile('10'), withFile('9')], has_more: false })
  assert.deepEqual(
    both.files.map((message) => message.id),
    ['30', '20', '10', '9'],
  )
  assert.equal(both.hasMore, false)
})

test('a message listed twice appears once, and one deleted since is left out', () => {
  const first = addFilePage(EMPTY_CHAT_FILES, { files: [withFile('30'), withFile('20')], has_more: true })
  const deleted = { ...withFile('20'), deleted: true, file: null }
  const next = addFilePage(first, { files: [deleted, withFile('100')], has_more: false })
  assert.deepEqual(
    next.files.map((message) => message.id),
    ['100', '30'],
  )
})

test('an empty chat has no cursor', () => {
  assert.equal(olderCursor(addFilePage(EMPTY_CHAT_FILES, { files: [], has_more: false })), undefined)
})
