import assert from 'node:assert/strict'
import { test } from 'node:test'
import { characterCount, lengthState, lengthText, MAX_MESSAGE_LENGTH, SHOW_REMAINING_BELOW } from './composer-length.ts'

test('characters are counted as the chat module counts them: an emoji is one', () => {
  assert.equal(characterCount('hello'), 5)
  assert.equal(characterCount('😀'.repeat(MAX_MESSAGE_LENGTH)), MAX_MESSAGE_LENGTH)
})

test('the counter appears near the limit and says how far over a text is', () => {
  assert.deepEqual(lengthState('x'.repeat(MAX_MESSAGE_LENGTH - SHOW_REMAINING_BELOW - 1)).near, false)
  const near = lengthState('x'.repeat(MAX_MESSAGE_LENGTH - SHOW_REMAINING_BELOW))
  assert.equal(near.near, true)
  assert.equal(near.over, false)
  assert.match(lengthText(near), /^1[,.\s]?000 characters left$/)
  const atLimit = lengthState('x'.repeat(MAX_MESSAGE_LENGTH))
  assert.equal(atLimit.over, false)
  assert.equal(lengthText(atLimit), '0 characters left')
  const over = lengthState('😀'.repeat(MAX_MESSAGE_LENGTH + 1))
  assert.equal(over.over, true)
  assert.match(
    lengthText(over),
    /^This message is 1 character too long: messages hold at most 16[,.\s]?384 characters\./,
  )
})
