import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTypingBoard, createTypingSender, typingText } from './typing-board.ts'

test('a typing entry expires by itself, is renewed by a new signal and ends with a message', () => {
  let now = 0
  const board = createTypingBoard(() => now)
  let changes = 0
  board.subscribe(() => changes++)
  board.add({ chat_id: 'c1', user: 'alice', expires_ms: 6000 })
  board.add({ chat_id: 'c1', user: 'bob', expires_ms: 6000 })
  assert.deepEqual(board.typingIn('c1'), ['alice', 'bob'])
  assert.deepEqual(board.typingIn('c2'), [])
  now = 5000
  board.add({ chat_id: 'c1', user: 'alice', expires_ms: 6000 })
  now = 6000
  assert.deepEqual(board.typingIn('c1'), ['alice'], "bob's entry expired, alice's was renewed")
  assert.equal(board.nextExpiry('c1'), 11_000)
  board.stopped('c1', 'alice')
  assert.deepEqual(board.typingIn('c1'), [])
  assert.equal(changes, 4)
})

test('the chat list reads who types in every chat, and when the first of them all ends', () => {
  let now = 0
  const board = createTypingBoard(() => now)
  board.add({ chat_id: 'c1', user: 'alice', expires_ms: 6000 })
  now = 2000
  board.add({ chat_id: 'c2', user: 'bob', expires_ms: 6000 })
  board.add({ chat_id: 'c2', user: 'carol', expires_ms: 6000 })
  assert.deepEqual(
    board.typingByChat(),
    new Map([
      ['c1', ['alice']],
      ['c2', ['bob', 'carol']],
    ]),
  )
  assert.equal(board.nextExpiry(), 6000)
  now = 6000
  assert.deepEqual(board.typingByChat(), new Map([['c2', ['bob', 'carol']]]))
  assert.equal(board.nextExpiry(), 8000)
  board.stopped('c2', 'bob')
  now = 8000
  assert.deepEqual(board.typingByChat(), new Map())
  assert.equal(board.nextExpiry(), undefined)
})

test('the sender sends at most one signal per interval however often the person types', async () => {
  let now = 0
  let sent = 0
  const typed = createTypingSender(
    async () => sent++,
    3000,
    () => now,
  )
  for (let key = 0; key < 50; key++) {
    typed()
    now += 100
  }
  assert.equal(sent, 2, 'at 0 s and at 3 s of five seconds of typing')
})

test('the indicator names one or two people and counts more', () => {
  assert.equal(typingText([]), '')
  assert.equal(typingText(['Alice']), 'Alice is typing…')
  assert.equal(typingText(['Alice', 'Bob']), 'Alice and Bob are typing…')
  assert.equal(typingText(['Alice', 'Bob', 'Carol']), '3 people are typing…')
})
