import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseMemberIds } from './member-ids.ts'

test('member ids may be separated by commas, semicolons or spaces; repeats count once', () => {
  assert.deepEqual(parseMemberIds(' 1002, 1003;1004  1002 '), { ids: ['1002', '1003', '1004'] })
  assert.deepEqual(parseMemberIds(''), { ids: [] })
})

test('the first entry that is not a user id is named', () => {
  assert.deepEqual(parseMemberIds('1002, bob@example.com, 0'), { bad: 'bob@example.com' })
  assert.deepEqual(parseMemberIds('0'), { bad: '0' })
})
