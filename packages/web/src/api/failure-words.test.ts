import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type ErrorName, errorCodes } from '@atrium/platform/errors'
import { type FailureKind, failureText, RequestError } from './envelope.ts'
import { FAILURE_WORDS } from './failure-words.ts'

const failure = (kind: FailureKind, message = 'body/email must match format "email"', details?: unknown) =>
  new RequestError(kind, message, { code: kind in errorCodes ? errorCodes[kind as ErrorName].code : 0, details })

/** Words that belong to the schema, the protocol or the code, not to a person using the client. */
const JARGON = /body\/|must match|schema|envelope|\bCRM\b|\bcrm_?id\b|\btus\b|\bHTTP\b|\bnull\b|undefined|\[object/i

test('every error code has words for people, free of schema language, that end a sentence', () => {
  const kinds: FailureKind[] = [...(Object.keys(errorCodes) as ErrorName[]), 'Network', 'BadResponse']
  for (const kind of kinds) {
    const text = failureText(failure(kind))
    assert.ok(FAILURE_WORDS[kind], kind)
    assert.doesNotMatch(text, JARGON, kind)
    assert.match(text, /^[A-Z].*[.!]$/, `${kind}: "${text}"`)
    assert.notEqual(text, 'body/email must match format "email"', `${kind} shows the server's message`)
  }
})

test("a schema refusal never shows the server's message; a screen may say what it means there", () => {
  assert.equal(
    failureText(failure('InvalidRequest')),
    'Something you entered was not accepted. Check it and try again.',
  )
  assert.equal(
    failureText(failure('InvalidRequest'), { InvalidRequest: 'Enter it like name@example.com.' }),
    'Enter it like name@example.com.',
  )
  assert.equal(failureText(new Error('TypeError: x is undefined')), 'Something went wrong. Try again.')
})

test('facts the server sends in details are put into the words', () => {
  assert.equal(
    failureText(failure('InvalidCredentials', 'wrong', { attemptsLeft: 3 })),
    'That code is not right. 3 tries are left.',
  )
  assert.equal(
    failureText(failure('InvalidCredentials', 'wrong', { attemptsLeft: 1 })),
    'That code is not right. One try is left.',
  )
  assert.equal(
    failureText(failure('ChallengeExpired', 'x', { reason: 'attempts_exhausted' })),
    'Too many wrong codes: this one no longer works. Ask for a new code.',
  )
  assert.equal(
    failureText(failure('ChallengeExpired')),
    'This code or link has expired or was already used. Ask for a new one.',
  )
  assert.equal(
    failureText(failure('RateLimited', 'x', { retryAfterSeconds: 42 })),
    'That was too many tries in a short time. Wait 42 seconds and try again.',
  )
  assert.equal(
    failureText(failure('RateLimited', 'x', { retryAfterSeconds: 600 })),
    'That was too many tries in a short time. Wait 10 minutes and try again.',
  )
  const internal = new RequestError('Internal', 'boom', { code: 1099, requestId: 'req-7' })
  assert.match(failureText(internal), /\(reference req-7\)\.$/)
})
