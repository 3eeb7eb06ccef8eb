import assert from 'node:assert/strict'
import { test } from 'node:test'
import { memoryStorage } from '../../memory-storage.ts'
import { RECENT_LIMIT, recentEmoji, rememberEmoji } from './recent-emoji.ts'

const KEY = 'atrium.emoji.recent'

test('a picked emoji goes first, once, and the row keeps the last eight', () => {
  const storage = memoryStorage()
  assert.deepEqual(recentEmoji(storage), [])
  for (const emoji of ['👍', '🎉', '👍']) rememberEmoji(emoji, storage)
  assert.deepEqual(recentEmoji(storage), ['👍', '🎉'])
  const picks = ['😀', '😄', '😁', '😅', '😂', '🤣', '🙂', '😉', '😊']
  for (const emoji of picks) rememberEmoji(emoji, storage)
  assert.equal(RECENT_LIMIT, 8)
  assert.deepEqual(recentEmoji(storage), picks.slice(-RECENT_LIMIT).reverse())
})

test('only emoji the picker offers are kept or shown; broken or blocked storage shows none', () => {
  const storage = memoryStorage({ [KEY]: JSON.stringify(['🎉', 'not an emoji', 42, '🎉', '🦄🦄', '👍']) })
  assert.deepEqual(recentEmoji(storage), ['🎉', '👍'])
  rememberEmoji('🦄🦄', storage)
  assert.deepEqual(recentEmoji(storage), ['🎉', '👍'])
  assert.deepEqual(recentEmoji(memoryStorage({ [KEY]: '{not json' })), [])
  assert.deepEqual(recentEmoji(memoryStorage({ [KEY]: '{"a":1}' })), [])
  assert.deepEqual(recentEmoji(undefined), [])
  const full = {
    ...memoryStorage({ [KEY]: '["👍"]' }),
    setItem: () => {
      throw new DOMException('full', 'QuotaExceededError')
    },
  }
  rememberEmoji('🎉', full as Storage)
  assert.deepEqual(recentEmoji(full as Storage), ['👍'])
})
