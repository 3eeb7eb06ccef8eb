import assert from 'node:assert/strict'
import { test } from 'node:test'
import { applyPatch, isEmptyPatch, type Patch, patchOf } from './patch.ts'

interface Chat {
  name: string
  description: string
  flags: number
  archived: boolean
}

const stored: Chat = { name: 'Team', description: 'daily', flags: 2, archived: false }

test('omitted and null fields keep the stored value', () => {
  const patch: Patch<Chat> = { name: null, description: undefined, flags: 6 }
  assert.deepEqual(patchOf(patch), { flags: 6 })
  assert.deepEqual(applyPatch(stored, patch), { ...stored, flags: 6 })
})

test('falsy values that are not null are real updates', () => {
  assert.deepEqual(patchOf<Chat>({ name: '', flags: 0, archived: false }), { name: '', flags: 0, archived: false })
})

test('a patch of only omitted or null fields is empty', () => {
  assert.equal(isEmptyPatch<Chat>({}), true)
  assert.equal(isEmptyPatch<Chat>({ name: null, archived: undefined }), true)
  assert.equal(isEmptyPatch<Chat>({ archived: true }), false)
})

test('applying a patch does not change the stored record', () => {
  applyPatch(stored, { name: 'Other' })
  assert.equal(stored.name, 'Team')
})
