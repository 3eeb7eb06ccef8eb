import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isLongMessage, LONG_MESSAGE_CHARACTERS, LONG_MESSAGE_LINES } from './long-message.ts'

test('a message is long past the character limit or the line limit, not at them', () => {
  assert.equal(isLongMessage(''), false)
  assert.equal(isLongMessage('x'.repeat(LONG_MESSAGE_CHARACTERS)), false)
  assert.equal(isLongMessage('x'.repeat(LONG_MESSAGE_CHARACTERS + 1)), true)
  const lines = (count: number) => Array.from({ length: count }, (_, index) => `line ${index}`).join('\n')
  assert.equal(isLongMessage(lines(LONG_MESSAGE_LINES)), false)
  assert.equal(isLongMessage(lines(LONG_MESSAGE_LINES + 1)), true)
  assert.equal(isLongMessage('\n'.repeat(LONG_MESSAGE_LINES)), true, 'empty lines count')
})
