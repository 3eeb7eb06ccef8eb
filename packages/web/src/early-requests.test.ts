import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ChatView } from './api/chat-types.ts'
import { PAGE } from './chat/conversation/page-size.ts'
import { loadClientConfig } from './config/client-config.ts'
import { EARLY_LIFETIME_MS, earlyFetch, startEarlyRequests } from './early-requests.ts'
import { createServices } from './services.ts'
import { rememberOpenedChat, rememberSignedIn } from './start-up.ts'

function memoryStorage() {
  const items = new Map<string, string>()
  return {
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
    removeItem: (key: string) => void items.delete(key),
    items,
  } as unknown as Storage
}

function signedInStorage(): Storage {
  const storage = memoryStorage()
  rememberSignedIn(storage, true)
  return storage
}

const CHATS = [{ id: '42', type: 2 } as ChatView, { id: '43', type: 1, peer: '77' } as ChatView]
const TICK = 895978574020608

/** What the gateway would answer each GET, as an envelope. */
function answer(url: string): Response {
  const result = url.startsWith('/auth/v1/session')
    ? { crmId: '7', appId: '1', keyType: 'session', scopes: [], csrf: 'token' }
    : url.startsWith('/msg/v1/get_chats')
      ? { chats: CHATS, tick: TICK }
      : url.startsWith('/msg/v1/get_chat_messages')
        ? { messages: [], has_more: false }
        : undefined
  if (url.endsWith('config.json')) return Response.json({})
  return Response.json({ result, id: 'req' }, { status: result ? 200 : 404 })
}

/** A fetch that answers like the gateway and records each call's URL and headers. */
function recordingFetch() {
  const calls: Array<{ url: string; headers: unknown; credentials: unknown; cache: unknown }> = []
  const send: typeof fetch = async (input, init) => {
    const url = String(input)
    calls.push({ url, headers: init?.headers, credentials: init?.credentials, cache: init?.cache })
    return answer(url)
  }
  return { calls, send, urls: () => calls.map((call) => call.url) }
}

const at = (pathname: string, search = '') => ({ pathname, search })

/** Lets the early script's chained callbacks (list → first page) run. */
async function settle() {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
}

const SESSION = '/auth/v1/session'
const CONFIG = '/chat/config.json'
const LIST = '/msg/v1/get_chats?include_hidden=true'
const pageOf = (chatId: string) => `/msg/v1/get_chat_messages?chat_id=${chatId}&limit=${PAGE}`

test('the session and config.json are asked for at once; the chat list only with the hint on a messenger path', async () => {
  for (const [storage, where, expected] of [
    [memoryStorage(), at('/chat/'), [SESSION, CONFIG]],
    [signedInStorage(), at('/chat/sign-in'), [SESSION, CONFIG]],
    [signedInStorage(), at('/chat/', '?code=abc'), [SESSION, CONFIG]],
    [signedInStorage(), at('/chat/account'), [SESSION, CONFIG]],
    [signedInStorage(), at('/chat/'), [SESSION, CONFIG, LIST]],
  ] as const) {
    const network = recordingFetch()
    const early = startEarlyRequests({ storage, location: where, fetch: network.send })
    await settle()
    assert.deepEqual(network.urls(), expected, where.pathname + where.search)
    assert.deepEqual([...early.keys()], expected)
  }
})

test("the path's chat's first page is asked for once the list holds it; a peer's CRM id or an unknown chat is not", async () => {
  const network = recordingFetch()
  startEarlyRequests({ storage: signedInStorage(), location: at('/chat/c/42'), fetch: network.send })
  await settle()
  assert.deepEqual(network.urls(), [SESSION, CONFIG, LIST, pageOf('42')])

  for (const id of ['77', '99']) {
    const other = recordingFetch()
    startEarlyRequests({ storage: signedInStorage(), location: at(`/chat/c/${id}`), fetch: other.send })
    await settle()
    assert.deepEqual(other.urls(), [SESSION, CONFIG, LIST], id)
  }
})

test("a path opened before asks for its chat's first page at once, without waiting for the list", async () => {
  const storage = signedInStorage()
  rememberOpenedChat(storage, '77', '43') // the private chat with the peer 77
  const urls: string[] = []
  // The list never answers: the page must not wait for it.
  const send: typeof fetch = (input) => {
    urls.push(String(input))
    return String(input) === LIST ? new Promise<Response>(() => {}) : Promise.resolve(answer(String(input)))
  }
  const early = startEarlyRequests({ storage, location: at('/chat/c/77'), fetch: send })
  assert.deepEqual(urls, [SESSION, CONFIG, LIST, pageOf('43')])
  assert.ok(early.has(pageOf('43')))
})

test("the client's first calls take the early answers: same URLs and headers, nothing asked twice", async () => {
  const storage = signedInStorage()
  const where = at('/chat/c/42')

  // What the client asks for by itself, without the early script.
  const alone = recordingFetch()
  const plain = createServices('device-guid-1', '', alone.send)
  await plain.auth.session()
  await loadClientConfig(CONFIG, alone.send)
  await plain.chat.getChatsWithHidden()
  await plain.chat.getChatMessages('42', { limit: PAGE })

  // The same calls with the early script's answers: the network sees each request once, as the script sent it.
  storage.setItem('atrium.deviceGuid', 'device-guid-1')
  const network = recordingFetch()
  const early = startEarlyRequests({ storage, location: where, fetch: network.send })
  await settle()
  const byScript = network.calls.length
  const send = earlyFetch(early, network.send)
  const services = createServices('device-guid-1', '', send)
  assert.equal((await services.auth.session())?.csrf, 'token')
  assert.deepEqual((await loadClientConfig(CONFIG, send)).problems, [])
  assert.deepEqual(await services.chat.getChatsWithHidden(), { chats: CHATS, tick: TICK })
  assert.deepEqual(await services.chat.getChatMessages('42', { limit: PAGE }), { messages: [], has_more: false })
  assert.equal(network.calls.length, byScript, 'a call went to the network instead of taking the early answer')
  assert.deepEqual(network.calls, alone.calls)
  assert.equal(early.size, 0)
})

test('an early answer goes to one GET taker, within its lifetime; other calls go to the network', async () => {
  const network = recordingFetch()
  let now = 1_000
  const early = new Map([[SESSION, Promise.resolve(Response.json({ early: true }))]])
  const send = earlyFetch(early, network.send, now, () => now)

  await send(SESSION, { method: 'POST' })
  assert.deepEqual(network.urls(), [SESSION], 'a POST goes to the network')
  assert.deepEqual(await (await send(SESSION)).json(), { early: true })
  assert.deepEqual(network.urls(), [SESSION])
  await send(SESSION)
  assert.deepEqual(network.urls(), [SESSION, SESSION], 'the second GET asks afresh')

  early.set(LIST, Promise.resolve(Response.json({ early: true })))
  now += EARLY_LIFETIME_MS + 1
  await send(LIST)
  assert.deepEqual(network.urls(), [SESSION, SESSION, LIST], 'an answer older than its lifetime is not taken')
  assert.equal(early.size, 0)
})

test('an early request that fails and is never taken raises no unhandled rejection', async () => {
  let unhandled = 0
  const count = () => unhandled++
  process.on('unhandledRejection', count)
  try {
    const failing: typeof fetch = async () => {
      throw new TypeError('Failed to fetch')
    }
    startEarlyRequests({ storage: signedInStorage(), location: at('/chat/c/42'), fetch: failing })
    await settle()
    await new Promise((resolve) => setTimeout(resolve, 10))
    assert.equal(unhandled, 0)
  } finally {
    process.off('unhandledRejection', count)
  }
})
