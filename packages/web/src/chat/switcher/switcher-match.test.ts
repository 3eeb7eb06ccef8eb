import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ChatView } from '../../api/chat-types.ts'
import { foldText } from '../../fold-text.ts'
import { SWITCHER_LIMIT, switcherMatches } from './switcher-match.ts'

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
