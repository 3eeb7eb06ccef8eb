import assert from 'node:assert/strict'
import { test } from 'node:test'
import { until } from '@atrium/platform/testing'
import { chatView } from '../api/chat-view-fixture.ts'
import { chatListReducer, EMPTY_CHAT_LIST } from '../chat/chat-list/chat-list-state.ts'
import { AVATAR_TONE, avatarHue, initials } from './initials.ts'
import { createPeopleNames, fallbackName, unknownPeopleText } from './people-names.ts'

const chat = (id: string, type: number, peer: string, name: string) => chatView(id, { type, peer, name })

test('initials take the first letters of the first two words; the hue is stable per id', () => {
  assert.equal(initials('alice archer smith'), 'AA')
  assert.equal(initials('  Bob '), 'B')
  assert.equal(initials('Émile Zola'), 'ÉZ')
  assert.equal(initials(''), '?')
  assert.equal(initials('User 4821'), 'U')
  assert.equal(initials('42'), '?')
  assert.equal(avatarHue('1002'), avatarHue('1002'))
  assert.ok(avatarHue('1002') >= 0 && avatarHue('1002') < 360)
  assert.equal(fallbackName('892143282679808'), 'User 9808')
})

test('ProfileChanged renames the private chat named after that person, not groups named alike', () => {
  const loaded = chatListReducer(EMPTY_CHAT_LIST, {
    type: 'loaded',
    chats: [chat('10', 1, '1002', 'Bob'), chat('11', 2, '0', 'Bob'), chat('12', 1, '1003', 'Carol')],
  })
  const event = {
    module: 'chat',
    tick: 5,
    type: 'ProfileChanged',
    data: { chat_id: '11', member: '1002', name: 'Robert' },
  }
  const renamed = chatListReducer(loaded, { type: 'event', event, me: '1001', openChatId: undefined })
  assert.deepEqual(renamed.chats.map((known) => [known.id, known.name]).sort(), [
    ['10', 'Robert'],
    ['11', 'Bob'],
    ['12', 'Carol'],
  ])
  // The same name again changes nothing.
  assert.deepEqual(
    chatListReducer(renamed, { type: 'event', event, me: '1001', openChatId: undefined }).chats,
    renamed.chats,
  )
})

test('people names are asked for once, in one batch, and a live rename reaches listeners', async () => {
  const asked: string[][] = []
  const names = createPeopleNames(
    async (ids) => {
      asked.push(ids)
      return ids.filter((id) => id !== '9').map((id) => ({ member: id, name: `Person ${id}` }))
    },
    async () => [],
  )
  let changes = 0
  names.subscribe(() => changes++)
  names.want(['1', '2', '9'])
  names.want(['2'])
  await until(() => names.get('1') !== undefined, 'the batched lookup')
  assert.deepEqual(asked, [['1', '2', '9']])
  assert.equal(names.get('2'), 'Person 2')
  assert.equal(names.get('9'), undefined, 'someone who shares no chat stays unnamed')
  names.learn([{ id: '2', name: 'Renamed' }])
  assert.equal(names.get('2'), 'Renamed')
  assert.equal(changes, 2)
})

test('refused ids are said in words', () => {
  assert.equal(
    unknownPeopleText(['123']),
    'There is nobody with the user id 123 here. Find people by name or email instead.',
  )
  assert.match(unknownPeopleText(['1', '2']), /^There is nobody with the user ids 1, 2 here\./)
})

/** WCAG relative luminance of an HSL colour (h in degrees, s and l in %). */
function luminance(h: number, s: number, l: number): number {
  const a = (s / 100) * Math.min(l / 100, 1 - l / 100)
  const channel = (n: number) => {
    const k = (n + h / 30) % 12
    const c = l / 100 - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  }
  return 0.2126 * channel(0) + 0.7152 * channel(8) + 0.0722 * channel(4)
}

test('white initials are readable on the avatar of any id: contrast at least 4.5:1 on every hue', () => {
  const { saturation, lightness } = AVATAR_TONE
  for (let hue = 0; hue < 360; hue++) {
    const contrast = 1.05 / (luminance(hue, saturation, lightness) + 0.05)
    assert.ok(contrast >= 4.5, `hue ${hue}: ${contrast.toFixed(2)}`)
  }
})
