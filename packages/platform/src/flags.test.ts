import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  allFlags,
  ChatMessFlags,
  ChatType,
  CommunicationChannel,
  clearFlag,
  flagNames,
  hasAnyFlag,
  hasFlag,
  MemberRole,
  setFlag,
  withFlag,
} from './flags.ts'

test('flag values are the spec values', () => {
  assert.deepEqual(ChatType, { Private: 1, Group: 2, InfoChannel: 4 })
  assert.deepEqual(MemberRole, { Owner: 1, Admin: 2, Private: 4, Hidden: 8, Pinned: 16, Muted: 32 })
  assert.equal(ChatMessFlags.Deleted, 1073741824)
  assert.equal(ChatMessFlags.WidgetCommand, 1024)
  assert.deepEqual(CommunicationChannel, { SMS: 1, Email: 2, Messenger: 4 })
})

test('set, clear and toggle keep the other bits', () => {
  const pinnedFile = setFlag(ChatMessFlags.File, ChatMessFlags.Pin)
  assert.equal(pinnedFile, 3)
  assert.equal(clearFlag(pinnedFile, ChatMessFlags.Pin), ChatMessFlags.File)
  const deleted = setFlag(pinnedFile, ChatMessFlags.Deleted)
  assert.ok(deleted > 0, 'the Deleted bit keeps the value positive')
  assert.ok(hasFlag(deleted, ChatMessFlags.Deleted) && hasFlag(deleted, ChatMessFlags.File))
  assert.equal(clearFlag(deleted, ChatMessFlags.Deleted), pinnedFile)
  assert.equal(withFlag(0, MemberRole.Hidden, true), 8)
  assert.equal(withFlag(MemberRole.Hidden | MemberRole.Admin, MemberRole.Hidden, false), MemberRole.Admin)
})

test('hasFlag needs every bit of a combined flag, hasAnyFlag one of them', () => {
  const ownerAndAdmin = MemberRole.Owner | MemberRole.Admin
  assert.equal(hasFlag(MemberRole.Admin, ownerAndAdmin), false)
  assert.equal(hasAnyFlag(MemberRole.Admin, ownerAndAdmin), true)
  assert.equal(hasAnyFlag(MemberRole.Pinned, ownerAndAdmin), false)
})

test('flag names and the union of a table', () => {
  assert.deepEqual(flagNames(MemberRole, MemberRole.Owner | MemberRole.Pinned), ['Owner', 'Pinned'])
  assert.deepEqual(flagNames(ChatMessFlags, 0), [])
  assert.equal(allFlags(ChatType), 7)
  assert.equal(allFlags(CommunicationChannel) & 8, 0)
})
