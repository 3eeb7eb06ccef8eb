import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  OPENED_CHATS_KEPT,
  OPENED_CHATS_KEY,
  openedChat,
  probablySignedIn,
  rememberOpenedChat,
  rememberSignedIn,
  SIGNED_IN_KEY,
} from './start-up.ts'

function memoryStorage() {
  const items = new Map<string, string>()
  return {
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
    removeItem: (key: string) => void items.delete(key),
    items,
  }
}

const refusing = {
  getItem(): string | null {
    throw new Error('SecurityError')
  },
  setItem() {
    throw new Error('QuotaExceededError')
  },
  removeItem() {
    throw new Error('SecurityError')
  },
}

test('the signed-in hint is set at sign-in and removed at sign-out', () => {
  const storage = memoryStorage()
  assert.equal(probablySignedIn(storage), false)
  rememberSignedIn(storage, true)
  assert.equal(storage.items.get(SIGNED_IN_KEY), '1')
  assert.equal(probablySignedIn(storage), true)
  rememberSignedIn(storage, false)
  assert.equal(storage.items.has(SIGNED_IN_KEY), false)
  assert.equal(probablySignedIn(storage), false)
})

test('without storage, or with storage that refuses, there is no hint and no error', () => {
  assert.equal(probablySignedIn(undefined), false)
  rememberSignedIn(undefined, true)
  assert.equal(probablySignedIn(refusing), false)
  rememberSignedIn(refusing, true)
  rememberSignedIn(refusing, false)
})

test('the chat each opened path showed is remembered, newest first and at most OPENED_CHATS_KEPT, and forgotten at sign-out', () => {
  const storage = memoryStorage()
  assert.equal(openedChat(storage, '42'), undefined)
  rememberOpenedChat(storage, '42', '42')
  rememberOpenedChat(storage, '77', '43') // a private chat opened by the peer's CRM id
  assert.equal(openedChat(storage, '42'), '42')
  assert.equal(openedChat(storage, '77'), '43')

  for (let i = 0; i < OPENED_CHATS_KEPT; i++) rememberOpenedChat(storage, `${1000 + i}`, `${2000 + i}`)
  assert.equal(openedChat(storage, '42'), undefined, 'the oldest paths fall out')
  assert.equal(openedChat(storage, `${1000 + OPENED_CHATS_KEPT - 1}`), `${2000 + OPENED_CHATS_KEPT - 1}`)
  assert.equal(JSON.parse(storage.items.get(OPENED_CHATS_KEY)!).length, OPENED_CHATS_KEPT)

  rememberSignedIn(storage, true)
  rememberSignedIn(storage, false)
  assert.equal(storage.items.has(OPENED_CHATS_KEY), false)
  assert.equal(openedChat(storage, '1000'), undefined)
})

test('a damaged opened-chats hint, or storage that refuses, is read as no hint', () => {
  const storage = memoryStorage()
  for (const value of ['not json', '{"42":"42"}', '[["42"]]', '[[42, 42]]', 'null']) {
    storage.setItem(OPENED_CHATS_KEY, value)
    assert.equal(openedChat(storage, '42'), undefined, value)
  }
  assert.equal(openedChat(refusing, '42'), undefined)
  rememberOpenedChat(refusing, '42', '42')
})
