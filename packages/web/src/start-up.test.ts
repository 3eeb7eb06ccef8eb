import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ChatView, MessagePage } from './api/chat-types.ts'
import { PAGE } from './chat/conversation/conversation-state.ts'
import { prefetched, probablySignedIn, rememberSignedIn, SIGNED_IN_KEY, startUpRequests } from './start-up.ts'

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

/** The two chat operations start-up may call, recording the calls. */
function recordingApi(chats: ChatView[]) {
  const calls: string[] = []
  const page: MessagePage = { messages: [], has_more: false }
  return {
    calls,
    page,
    async getChatsWithHidden() {
      calls.push('get_chats')
      return chats
    },
    async getChatMessages(chatId: string, cursor: { limit?: number } = {}) {
      calls.push(`get_chat_messages ${chatId} ${cursor.limit}`)
      return page
    },
  }
}

const at = (pathname: string, search = '') => ({ pathname, search })

test('the chat list is asked for at start only with the hint and on a messenger path', async () => {
  const api = recordingApi([])
  const signedIn = memoryStorage()
  rememberSignedIn(signedIn, true)

  assert.equal(startUpRequests(memoryStorage(), at('/chat/'), api).chats.take(), undefined)
  assert.equal(startUpRequests(signedIn, at('/chat/sign-in'), api).chats.take(), undefined)
  assert.equal(startUpRequests(signedIn, at('/chat/', '?code=abc'), api).chats.take(), undefined)
  assert.deepEqual(api.calls, [])

  assert.deepEqual(await startUpRequests(signedIn, at('/chat/'), api).chats.take(), [])
  assert.deepEqual(api.calls, ['get_chats'])
})

test("the first page of the path's chat is asked for as soon as the list holds it, for one taker", async () => {
  const api = recordingApi([{ id: '42', type: 2 } as ChatView, { id: '43', type: 1, peer: '77' } as ChatView])
  const signedIn = memoryStorage()
  rememberSignedIn(signedIn, true)

  const requests = startUpRequests(signedIn, at('/chat/c/42'), api)
  await requests.chats.take()
  assert.deepEqual(api.calls, ['get_chats', `get_chat_messages 42 ${PAGE}`])
  assert.equal(requests.firstPage('43'), undefined)
  assert.equal(await requests.firstPage('42'), api.page)
  assert.equal(requests.firstPage('42'), undefined)

  // A peer's CRM id, or a chat the list does not hold: the conversation asks for itself.
  api.calls.length = 0
  await startUpRequests(signedIn, at('/chat/c/77'), api).chats.take()
  await startUpRequests(signedIn, at('/chat/c/99'), api).chats.take()
  assert.deepEqual(api.calls, ['get_chats', 'get_chats'])
})

test('a prefetched request goes to its first taker only; an untaken failure stays silent', async () => {
  const value = prefetched(Promise.resolve('list'))
  assert.equal(await value.take(), 'list')
  assert.equal(value.take(), undefined)

  let unhandled = 0
  const count = () => unhandled++
  process.on('unhandledRejection', count)
  try {
    prefetched(Promise.reject(new Error('401 SessionRequired')))
    await new Promise((resolve) => setTimeout(resolve, 10))
    assert.equal(unhandled, 0)
  } finally {
    process.off('unhandledRejection', count)
  }

  const failing = prefetched(Promise.reject(new Error('500')))
  await assert.rejects(failing.take()!, /500/)
})
