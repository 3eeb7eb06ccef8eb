import assert from 'node:assert/strict'
import { test } from 'node:test'
import { objectTypeWord, parseObjectType } from './object-types.ts'

test('an object type in a path is a FeedbackType number or its name in any case', () => {
  assert.equal(parseObjectType('4'), 4)
  assert.equal(parseObjectType('order'), 4)
  assert.equal(parseObjectType('Product'), 3)
  assert.equal(parseObjectType('0'), undefined)
  assert.equal(parseObjectType('99'), undefined)
  assert.equal(parseObjectType('invoice'), undefined)
  assert.equal(objectTypeWord(2), 'service')
})
