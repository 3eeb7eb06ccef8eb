import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pageTitle } from './page-title.ts'

test('a tab title puts the unread count first, then the screen, then the client', () => {
  assert.equal(pageTitle(), 'Atrium Chat')
  assert.equal(pageTitle('Alice'), 'Alice · Atrium Chat')
  assert.equal(pageTitle('Alice', 3), '(3) Alice · Atrium Chat')
  assert.equal(pageTitle(undefined, 1), '(1) Atrium Chat')
  assert.equal(pageTitle('Team', 100), '(99+) Team · Atrium Chat')
})
