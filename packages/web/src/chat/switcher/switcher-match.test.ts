import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { PersonView } from '../../api/auth-api.ts'
import type { ChatView } from '../../api/chat-types.ts'
import { foldText } from '../../fold-text.ts'
import { ChatType } from '../message/names.ts'
import { SWITCHER_LIMIT, SWITCHER_PEOPLE_LIMIT, switcherMatches, switcherPeople } from './switcher-match.ts'

function chat(id: number, name: string, hidden = false): ChatView {
  return { id: String(id), name, hidden } as ChatView
}

const names = (chats: ChatView[]) => chats.map((found) => found.name)

test('names that start with the query come first, then a word that does, then any other place; list order within each', () => {
  const list = [
    chat(1, 'Backend team'),
    chat(2, 'Team lunch'),
    chat(3, 'Steam room'),
    chat(4, 'The A-Team'),
    chat(5, 'Marketing'),
    chat(6, 'team-ops'),
  ]
  assert.deepEqual(names(switcherMatches(list, 'team')), [
    'Team lunch',
    'team-ops',
    'Backend team',
    'The A-Team',
    'Steam room',
  ])
  assert.deepEqual(names(switcherMatches(list, '  MARK ')), ['Marketing'])
  assert.deepEqual(switcherMatches(list, 'nothing like it'), [])
})

test('accents and case do not matter, either way round', () => {
  const list = [chat(1, 'Zoë Ångström'), chat(2, 'équipe')]
  assert.equal(foldText('Zoë Ångström'), 'zoe angstrom')
  assert.deepEqual(names(switcherMatches(list, 'zoe')), ['Zoë Ångström'])
  assert.deepEqual(names(switcherMatches(list, 'angst')), ['Zoë Ångström'])
  assert.deepEqual(names(switcherMatches(list, 'ÉQUIPE')), ['équipe'])
})

test('hidden chats are found after the others; an empty query offers the first chats of the list', () => {
  const list = [chat(1, 'Design', true), chat(2, 'Design review'), chat(3, 'Old design notes')]
  assert.deepEqual(names(switcherMatches(list, 'design')), ['Design review', 'Design', 'Old design notes'])
  const many = Array.from({ length: SWITCHER_LIMIT + 3 }, (_, index) => chat(index, `Chat ${index}`, index === 0))
  const offered = switcherMatches(many, ' ')
  assert.equal(offered.length, SWITCHER_LIMIT)
  assert.equal(offered[0]?.name, 'Chat 1')
  assert.ok(!offered.some((found) => found.hidden))
})

test('people offered: not oneself, nobody with a private chat already (hidden or not), in the search order, at most five', () => {
  const person = (id: number, name: string): PersonView => ({ id: String(id), name, matched: 'name' })
  const privateChat = (id: number, peer: number, hidden = false) =>
    ({ id: String(id), name: `Peer ${peer}`, type: ChatType.Private, peer: String(peer), hidden }) as ChatView
  const group = { id: '90', name: 'Carol and friends', type: ChatType.Group, peer: '0', hidden: false } as ChatView
  const chats = [privateChat(10, 2), privateChat(11, 3, true), group]
  const found = [
    person(1, 'Me myself'),
    person(2, 'Bob'),
    person(3, 'Hidden Hal'),
    person(4, 'Carol'),
    person(5, 'Cara'),
  ]
  assert.deepEqual(
    switcherPeople(found, chats, '1').map(({ name }) => name),
    ['Carol', 'Cara'],
  )
  // A group chat with a person in it is no private chat with them.
  const many = Array.from({ length: 8 }, (_, index) => person(20 + index, `Person ${index}`))
  assert.deepEqual(
    switcherPeople(many, chats, '1').map(({ id }) => id),
    ['20', '21', '22', '23', '24'],
  )
  assert.equal(SWITCHER_PEOPLE_LIMIT, 5)
})
