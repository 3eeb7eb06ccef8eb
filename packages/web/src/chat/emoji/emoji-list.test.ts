import assert from 'node:assert/strict'
import { test } from 'node:test'
import { EMOJI_GROUPS, findEmoji } from './emoji-list.ts'

const emoji = (query: string) => findEmoji(query).map((choice) => choice.emoji)

test('emoji are found by the start of any word of their name or keywords, every typed word counting', () => {
  assert.deepEqual(emoji('thumb'), ['👍', '👎'])
  assert.deepEqual(emoji('THUMBS up'), ['👍'])
  assert.deepEqual(emoji('coffee'), ['☕'])
  assert.deepEqual(emoji('lol'), ['😂', '🤣'])
  assert.ok(emoji('heart').includes('❤️') && emoji('heart').includes('😍'))
  assert.deepEqual(emoji('ear'), [], 'no match inside a word')
  assert.deepEqual(emoji('zzzz'), [])
})

test('an empty query offers every emoji once, each with a name', () => {
  const all = findEmoji('  ')
  const count = EMOJI_GROUPS.reduce((sum, group) => sum + group.choices.length, 0)
  assert.equal(all.length, count)
  assert.equal(new Set(all.map((choice) => choice.emoji)).size, count, 'no emoji twice')
  assert.ok(all.every((choice) => choice.name.length > 0))
})
