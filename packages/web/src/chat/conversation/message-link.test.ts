import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { MessageView } from '../../api/chat-types.ts'
import { linkedMessage, messageLink } from './message-link.ts'

test('a message’s link opens its chat at it, and only a well-formed hash names a message', () => {
  const message = { id: '896279291166720', chat_id: '896278892158976' } as MessageView
  const link = messageLink(message, 'https://chat.example.com')
  assert.equal(link, 'https://chat.example.com/chat/c/896278892158976#message-896279291166720')
  assert.equal(linkedMessage(new URL(link).hash), '896279291166720')
  for (const hash of ['', '#message-', '#message-0123', '#message-12x', '#message-12345678901234567', '#other-5'])
    assert.equal(linkedMessage(hash), undefined, hash)
})
