import assert from 'node:assert/strict'
import { test } from 'node:test'
import { outboxLine } from './outbox-lines.ts'

test('a message with a code is one line: address, code and link', () => {
  const text =
    'Channel: email\nTo: a@example.com\nSubject: Your sign-in code\nCode: 123456\nLink: http://l/x?t=1\n\nYour…'
  assert.equal(outboxLine(text, 'f.txt'), '[sign-in] a@example.com  code 123456  http://l/x?t=1')
  assert.equal(
    outboxLine('Channel: sms\nTo: +4917012\nCode: 9\n\nYour sign-in code is 9\n', 'f.txt'),
    '[sign-in] +4917012  code 9',
  )
})

test('a message without a code names its subject and file', () => {
  const text = 'Channel: email\nTo: b@example.com\nSubject: Reset your password\n\nCode: not a header\n'
  assert.equal(outboxLine(text, 'data/outbox/x.txt'), '[outbox] b@example.com  Reset your password  data/outbox/x.txt')
})
