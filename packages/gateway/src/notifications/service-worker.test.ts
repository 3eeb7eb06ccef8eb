import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runInNewContext } from 'node:vm'
import { startGateway } from '../../test/support.ts'

const ORIGIN = 'https://atrium.example'

interface WindowClient {
  url: string
  focused: boolean
  focus?: () => Promise<WindowClient>
  navigate?: (url: string) => Promise<WindowClient | null>
}

/**
 * Runs the worker's source in a fresh context with the parts of the ServiceWorkerGlobalScope it
 * uses, recording what it asks the browser to do (show, focus, open).
 */
function loadWorker(source: string, windows: WindowClient[] = [], { controlled = true } = {}) {
  const listeners = new Map<string, (event: object) => void>()
  const shown: { title: string; options: Record<string, unknown> }[] = []
  const focused: string[] = []
  const opened: string[] = []
  const navigated: string[] = []
  for (const client of windows) {
    client.focus = async () => {
      focused.push(client.url)
      return client
    }
    // As in browsers, only a window this worker controls can be navigated by it.
    client.navigate = async (url: string) => {
      if (!controlled) throw new TypeError('This service worker is not the client’s active service worker.')
      navigated.push(url)
      client.url = url
      return client
    }
  }
  const self = {
    location: { origin: ORIGIN },
    addEventListener: (type: string, listener: (event: object) => void) => listeners.set(type, listener),
    skipWaiting: async () => {},
    registration: {
      showNotification: async (title: string, options: Record<string, unknown>) => {
        shown.push({ title, options })
      },
    },
    clients: {
      claim: async () => {},
      matchAll: async () => windows,
      openWindow: async (url: string) => {
        opened.push(url)
        return null
      },
    },
  }
  runInNewContext(source, { self, URL })

  async function dispatch(type: string, event: object) {
    const pending: Promise<unknown>[] = []
    listeners.get(type)!({ ...event, waitUntil: (promise: Promise<unknown>) => pending.push(promise) })
    await Promise.all(pending)
  }
  return {
    shown,
    focused,
    opened,
    navigated,
    push: (payload: unknown) =>
      dispatch('push', {
        data: { json: () => JSON.parse(JSON.stringify(payload)), text: () => JSON.stringify(payload) },
      }),
    click: (data: unknown) => dispatch('notificationclick', { notification: { data, close() {} } }),
  }
}

test('GET /sw.js is the root service worker, revalidated on every update check', async (t) => {
  const { url } = await startGateway(t, 'sqlite')
  const response = await fetch(`${url}/sw.js`)
  assert.equal(response.status, 200)
  assert.equal(response.headers.get('content-type'), 'text/javascript; charset=utf-8')
  assert.equal(response.headers.get('service-worker-allowed'), '/')
  assert.equal(response.headers.get('cache-control'), 'no-cache')
  const source = await response.text()
  assert.match(source, /addEventListener\('push'/)
  const etag = response.headers.get('etag')!
  const again = await fetch(`${url}/sw.js`, { headers: { 'if-none-match': etag } })
  assert.equal(again.status, 304)
})

test('the worker shows a push and a click opens or focuses its URL', async (t) => {
  const { url } = await startGateway(t, 'sqlite')
  const source = await (await fetch(`${url}/sw.js`)).text()

  const worker = loadWorker(source)
  await worker.push({ title: 'Bob', body: 'Hi', url: '/chat/c/1002', tag: 'chat-7' })
  assert.equal(worker.shown.length, 1)
  const [{ title, options }] = worker.shown as [{ title: string; options: Record<string, unknown> }]
  assert.equal(title, 'Bob')
  assert.equal(options.body, 'Hi')
  assert.equal(options.tag, 'chat-7')
  assert.equal(options.renotify, true)
  // Objects made inside the worker's context have its prototypes: compare their fields.
  assert.equal((options.data as { url: string }).url, `${ORIGIN}/chat/c/1002`)
  await worker.click(options.data)
  assert.deepEqual(worker.opened, [`${ORIGIN}/chat/c/1002`])

  // Only paths of this origin open; anything else opens the root.
  for (const target of ['https://evil.example/x', '//evil.example/x', '/\\evil.example/x']) {
    const probe = loadWorker(source)
    await probe.push({ title: 'x', url: target })
    assert.equal((probe.shown[0]!.options.data as { url: string }).url, `${ORIGIN}/`, target)
    await probe.click({ url: target })
    assert.deepEqual(probe.opened, [`${ORIGIN}/`], target)
  }

  const open = loadWorker(source, [{ url: `${ORIGIN}/chat/c/1002`, focused: false }])
  await open.click({ url: `${ORIGIN}/chat/c/1002` })
  assert.deepEqual([open.focused, open.opened], [[`${ORIGIN}/chat/c/1002`], []], 'an open window is focused')

  // Another tab of the messenger is taken to the chat and focused, not a new one opened.
  const messenger = loadWorker(source, [
    { url: `${ORIGIN}/wallet/`, focused: false },
    { url: `${ORIGIN}/chat/c/1003`, focused: false },
  ])
  await messenger.click({ url: `${ORIGIN}/chat/c/1002` })
  assert.deepEqual(
    [messenger.navigated, messenger.focused, messenger.opened],
    [[`${ORIGIN}/chat/c/1002`], [`${ORIGIN}/chat/c/1002`], []],
    'the messenger tab goes to the chat',
  )
  const otherApp = loadWorker(source, [{ url: `${ORIGIN}/wallet/`, focused: false }])
  await otherApp.click({ url: `${ORIGIN}/chat/c/1002` })
  assert.deepEqual([otherApp.navigated, otherApp.opened], [[], [`${ORIGIN}/chat/c/1002`]], 'another app is left alone')
  const uncontrolled = loadWorker(source, [{ url: `${ORIGIN}/chat/`, focused: false }], { controlled: false })
  await uncontrolled.click({ url: `${ORIGIN}/chat/c/1002` })
  assert.deepEqual(uncontrolled.opened, [`${ORIGIN}/chat/c/1002`], 'a tab that cannot be navigated: a new one')

  const watching = loadWorker(source, [{ url: `${ORIGIN}/chat/c/1002`, focused: true }])
  await watching.push({ title: 'Bob', body: 'Hi', url: '/chat/c/1002' })
  assert.equal(watching.shown.length, 0, 'the focused window already shows it')
  await watching.push({ title: 'Carol', body: 'Hey', url: '/chat/c/1003' })
  assert.equal(watching.shown.length, 1, 'another chat is shown')

  const garbled = loadWorker(source)
  await garbled.push(undefined)
  assert.equal(garbled.shown[0]!.title, 'Atrium')
})
