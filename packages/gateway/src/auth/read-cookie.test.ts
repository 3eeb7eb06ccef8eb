import assert from 'node:assert/strict'
import { test } from 'node:test'
import { readCookie } from './authenticate.ts'

test('readCookie finds one cookie by its exact name among the pairs of a Cookie header', () => {
  assert.equal(readCookie('atrium_session=abc', 'atrium_session'), 'abc')
  assert.equal(readCookie('a=1; atrium_session=abc; b=2', 'atrium_session'), 'abc', 'between others')
  assert.equal(readCookie('a=1;atrium_session=abc', 'atrium_session'), 'abc', 'without a space')
  assert.equal(readCookie('  atrium_session = abc  ;b=2', 'atrium_session'), 'abc', 'spaces around are dropped')
  assert.equal(readCookie('atrium_session=a=b=c', 'atrium_session'), 'a=b=c', 'the value may hold =')
  assert.equal(readCookie('atrium_session=', 'atrium_session'), '', 'an empty value')
  assert.equal(readCookie('atrium_session=first; atrium_session=second', 'atrium_session'), 'first', 'the first wins')
})

test('readCookie finds nothing for another name, a longer or shorter one, or pairs without =', () => {
  assert.equal(readCookie(undefined, 'atrium_session'), undefined)
  assert.equal(readCookie('', 'atrium_session'), undefined)
  assert.equal(readCookie('x_atrium_session=abc', 'atrium_session'), undefined, 'a longer name')
  assert.equal(readCookie('atrium_session_x=abc', 'atrium_session'), undefined, 'a name it starts')
  assert.equal(readCookie('atrium_session; b=atrium_session=abc', 'atrium_session'), undefined, 'no = in its pair')
  assert.equal(readCookie('=abc; ;;', 'atrium_session'), undefined, 'no name, empty pairs')
  assert.equal(readCookie('a=1; b=2', 'b=2'), undefined, 'a name is never matched across its =')
})
