import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { MessageView } from '../../api/chat-types.ts'
import { messageView } from '../../api/message-view-fixture.ts'
import { addSearchPage, searchSnippet, searchWords } from './search-state.ts'

// Search can answer reaction rows, which the view type does not name: the state must drop them.
const message = (id: string, content: string, linkKind = 'none') =>
  messageView(id, { content, link_kind: linkKind as MessageView['link_kind'] })

test('pages of results are appended newest first, each message once, without reaction rows', () => {
  const first = addSearchPage(undefined, 'deploy', {
    messages: [message('1009', 'deploy done'), message('1008', '👍', 'reaction'), message('1005', 'deploy soon')],
    has_more: true,
  })
  assert.deepEqual(
    first.messages.map((m) => m.id),
    ['1009', '1005'],
  )
  // The cursor is the server's last row, also when that row is not shown.
  assert.equal(first.cursor, '1005')
  assert.equal(first.hasMore, true)
  const second = addSearchPage(first, 'deploy', {
    messages: [message('1005', 'deploy soon'), message('1001', 'first deploy')],
    has_more: false,
  })
  assert.deepEqual(
    second.messages.map((m) => m.id),
    ['1009', '1005', '1001'],
  )
  assert.equal(second.hasMore, false)
})

test('a new query starts the results afresh', () => {
  const first = addSearchPage(undefined, 'deploy', { messages: [message('1009', 'deploy done')], has_more: false })
  const other = addSearchPage(first, 'gateway', { messages: [message('1003', 'gateway up')], has_more: false })
  assert.deepEqual(
    other.messages.map((m) => m.content),
    ['gateway up'],
  )
})

test('the words of a query are split on any whitespace', () => {
  assert.deepEqual(searchWords('  gate\tway   東京 '), ['gate', 'way', '東京'])
  assert.deepEqual(searchWords('   '), [])
})

test('a snippet shows the first match of a long text, short texts whole', () => {
  assert.equal(searchSnippet('short  text\nhere', ['text']), 'short text here')
  const long = `${'a'.repeat(200)} needle ${'b'.repeat(200)}`
  const snippet = searchSnippet(long, ['NEEDLE'], 40)
  assert.ok(snippet.includes('needle'), snippet)
  assert.ok(snippet.startsWith('…') && snippet.endsWith('…'), snippet)
  assert.equal(searchSnippet(long, ['missing'], 40), `${'a'.repeat(40)}…`)
})
