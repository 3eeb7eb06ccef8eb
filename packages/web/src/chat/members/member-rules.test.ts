import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ChatView, MemberView } from '../../api/chat-types.ts'
import { inListOrder, managesChat, memberActions, roleName } from './member-rules.ts'

function group(role: number, type = 2): ChatView {
  return {
    id: '500',
    type,
    name: 'Project',
    description: '',
    owner: '1001',
    peer: '0',
    archived: false,
    role,
    pinned: false,
    hidden: false,
    muted: false,
    muted_until: '',
    member_count: 4,
    unread: 0,
    last_message: '0',
    last_message_preview: null,
    created: '2026-11-22T06:16:50.198Z',
    timetick_update: '500',
  }
}

function member(id: string, role: 'owner' | 'admin' | 'member'): MemberView {
  return {
    member: id,
    name: `Person ${id}`,
    role: role === 'owner' ? 1 : role === 'admin' ? 2 : 0,
    owner: role === 'owner',
    admin: role === 'admin',
    joined: '2026-11-22T06:16:50.198Z',
    last_read: '0',
  }
}

const actions = (makeAdmin: boolean, revokeAdmin: boolean, remove: boolean) => ({ makeAdmin, revokeAdmin, remove })

test('the owner promotes and removes members, demotes and removes admins, and is never changed', () => {
  const chat = group(1)
  assert.deepEqual(memberActions(chat, '1001', member('1003', 'member')), actions(true, false, true))
  assert.deepEqual(memberActions(chat, '1001', member('1002', 'admin')), actions(false, true, true))
  assert.deepEqual(memberActions(chat, '1001', member('1001', 'owner')), actions(false, false, false))
})

test('an admin promotes and removes plain members, steps down, and leaves other admins alone', () => {
  const chat = group(2 | 16)
  assert.deepEqual(memberActions(chat, '1002', member('1003', 'member')), actions(true, false, true))
  assert.deepEqual(memberActions(chat, '1002', member('1002', 'admin')), actions(false, true, false))
  assert.deepEqual(memberActions(chat, '1002', member('1004', 'admin')), actions(false, false, false))
  assert.deepEqual(memberActions(chat, '1002', member('1001', 'owner')), actions(false, false, false))
})

test('plain members and private chats offer no member management', () => {
  assert.equal(managesChat(group(0)), false)
  assert.equal(managesChat(group(16)), false)
  assert.equal(managesChat(group(1, 1)), false)
  assert.equal(managesChat(group(2, 4)), true)
  assert.deepEqual(memberActions(group(0), '1003', member('1004', 'member')), actions(false, false, false))
})

test('roles read as Owner, Admin or Member', () => {
  assert.deepEqual([member('1', 'owner'), member('2', 'admin'), member('3', 'member')].map(roleName), [
    'Owner',
    'Admin',
    'Member',
  ])
})

test('the panel lists the owner, then admins, then members, each by name as people read it, then by id', () => {
  const named = (id: string, role: 'owner' | 'admin' | 'member', name: string) => ({ ...member(id, role), name })
  const members = [
    named('7', 'member', 'bob'),
    named('12', 'member', 'Émile'),
    named('3', 'admin', 'Zoe'),
    named('9', 'member', 'Alice'),
    named('100', 'member', 'Bob'),
    named('4', 'owner', 'Yann'),
    named('5', 'admin', 'Carl'),
    named('8', 'member', 'User 10'),
    named('6', 'member', 'User 9'),
  ]
  const order = inListOrder(members, (m) => m.name).map((m) => m.member)
  assert.deepEqual(order, ['4', '5', '3', '9', '7', '100', '12', '6', '8'])
  // The list given stays as it was (paging continues from its last id).
  assert.deepEqual(
    members.map((m) => m.member),
    ['7', '12', '3', '9', '100', '4', '5', '8', '6'],
  )
})
