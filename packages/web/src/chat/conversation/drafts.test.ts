import assert from 'node:assert/strict'
import { test } from 'node:test'
import { memoryStorage } from '../../memory-storage.ts'
import { createDrafts } from './drafts.ts'

test('a draft is kept per person and chat, removed when blank, and all of a person’s go at sign-out', () => {
  const storage = memoryStorage()
  const drafts = createDrafts(storage)
  drafts.save('1001', '7', 'half a thought')
  drafts.save('1001', '8', 'another')
  drafts.save('1002', '7', 'someone else’s')
  assert.equal(drafts.read('1001', '7'), 'half a thought')
  assert.equal(drafts.read('1002', '7'), 'someone else’s')
  assert.equal(drafts.read('1001', '9'), '')
  assert.deepEqual(
    drafts.all('1001'),
    new Map([
      ['7', 'half a thought'],
      ['8', 'another'],
    ]),
  )
  drafts.save('1001', '8', '   ')
  assert.equal(drafts.read('1001', '8'), '')
  drafts.forget('1001')
  assert.equal(drafts.read('1001', '7'), '')
  assert.equal(drafts.read('1002', '7'), 'someone else’s', 'only the person’s own')
  assert.equal(storage.length, 1)
  // Without storage (blocked), nothing is kept and nothing fails.
  const none = createDrafts(undefined)
  none.save('1001', '7', 'x')
  assert.equal(none.read('1001', '7'), '')
  none.forget('1001')
})

test('a person’s drafts are read from storage once, kept current by saves, and read again when another tab wrote', () => {
  const storage = memoryStorage()
  let scans = 0
  const counted: Storage = {
    ...storage,
    get length() {
      return storage.length
    },
    key: (index) => {
      scans++
      return storage.key(index)
    },
  }
  storage.setItem('atrium.draft.1001.7', 'from before')
  const drafts = createDrafts(counted)
  assert.deepEqual(drafts.all('1001'), new Map([['7', 'from before']]))
  const afterFirst = scans
  drafts.save('1001', '8', 'typed here')
  drafts.save('1001', '7', '')
  assert.deepEqual(drafts.all('1001'), new Map([['8', 'typed here']]))
  assert.equal(scans, afterFirst, 'no second pass over the keys')
  // Another tab writes to the same storage; its storage event makes this store read again.
  storage.setItem('atrium.draft.1001.9', 'from the other tab')
  assert.equal(drafts.all('1001').has('9'), false)
  drafts.reload()
  assert.deepEqual(
    drafts.all('1001'),
    new Map([
      ['8', 'typed here'],
      ['9', 'from the other tab'],
    ]),
  )
})
