import assert from 'node:assert/strict'
import { type TestContext, test } from 'node:test'
import { until } from '@atrium/platform/testing'
import { DOWN_MS, onGatewayAddress, watchAddress } from './address-move.ts'
import { startAddress } from './address-stand-in.ts'

/**
 * A page on p1.example.com whose own gateway is `own` (a stand-in on a loopback port), watching with
 * short pauses until the test ends; `moves` collects the addresses it would move to.
 */
function watchedPage(t: TestContext, own: string, candidates: string[], retry = { minMs: 20, maxMs: 80 }) {
  const moves: string[] = []
  const location = {
    hostname: 'p1.example.com',
    origin: own,
    pathname: '/chat/c/42',
    search: '?tab=files',
    hash: '#m5',
    replace: (url: string | URL) => void moves.push(String(url)),
  }
  const watcher = watchAddress({
    location,
    domain: 'example.com',
    candidates,
    timeoutMs: 500,
    downMs: 30,
    retry,
  })
  t.after(() => watcher.close())
  return { watcher, moves }
}

test('only a page on p1, p2 or p3 of a built deployment watches its gateway', (t: TestContext) => {
  for (const hostname of ['p1.example.com', 'p2.example.com', 'p3.example.com'])
    assert.equal(onGatewayAddress({ hostname }, 'example.com'), true, hostname)
  for (const hostname of ['example.com', 'p4.example.com', 'p1.other.org', 'localhost', '127.0.0.1'])
    assert.equal(onGatewayAddress({ hostname }, 'example.com'), false, hostname)
  assert.equal(onGatewayAddress({ hostname: 'p1.example.com' }, ''), false, 'a development build')

  t.mock.timers.enable({ apis: ['setTimeout'] })
  let probes = 0
  const counting: typeof fetch = async () => {
    probes++
    throw new TypeError('fetch failed')
  }
  const moves: string[] = []
  const pageOn = (hostname: string, domain: string) => {
    const location = {
      hostname,
      origin: `https://${hostname}`,
      pathname: '/chat/',
      search: '',
      hash: '',
      replace: (url: string | URL) => void moves.push(String(url)),
    }
    const watcher = watchAddress({ location, domain, fetch: counting })
    t.after(() => watcher.close())
    watcher.status('offline')
    t.mock.timers.tick(DOWN_MS)
  }
  for (const [hostname, domain] of [
    ['localhost', ''],
    ['127.0.0.1', ''],
    ['p1.example.com', ''],
    ['example.com', 'example.com'],
  ] as const)
    pageOn(hostname, domain)
  assert.equal(probes, 0)
  // The same steps on a pN address do probe its own gateway.
  pageOn('p1.example.com', 'example.com')
  assert.equal(probes, 1)
  assert.deepEqual(moves, [])
})

test('a page whose gateway fails twice moves to the fastest other address, with its path, query and hash', async (t) => {
  const own = await startAddress(t, 0, 500)
  const slow = await startAddress(t, 150)
  const fast = await startAddress(t, 0)
  const gone = await startAddress(t)
  await gone.close()
  const page = watchedPage(t, own.origin, [own.origin, slow.origin, fast.origin, gone.origin])

  // A stream that never opens counts as down, as one that broke does (the other tests).
  page.watcher.status('connecting')
  await until(() => page.moves.length > 0, 'the move')
  assert.deepEqual(page.moves, [`${fast.origin}/chat/c/42?tab=files#m5`])
  assert.equal(own.state.hits, 2, 'two failed probes of its own gateway, and no more')
  assert.deepEqual([slow.state.hits, fast.state.hits], [1, 1], 'the others probed once, together')
})

test('a page stays while its own gateway answers, and counts failures afresh after the stream came back', async (t) => {
  const own = await startAddress(t, 0, 200)
  const other = await startAddress(t, 0)
  const page = watchedPage(t, own.origin, [own.origin, other.origin], { minMs: 600, maxMs: 600 })

  // The stream is down but the gateway answers (the trouble is elsewhere): no one else is asked.
  page.watcher.status('offline')
  await until(() => own.state.hits >= 2, 'two probes of its own gateway')
  assert.equal(other.state.hits, 0)

  // Live again, then the gateway fails once and the stream comes back before the next probe.
  page.watcher.status('live')
  own.set({ status: 500 })
  const before = own.state.hits
  page.watcher.status('offline')
  await until(() => own.state.hits === before + 1, 'one failed probe')
  page.watcher.status('live')
  // Down again: two new failures are needed, the one before the stream came back does not count.
  page.watcher.status('offline')
  await until(() => page.moves.length > 0, 'the move')
  assert.equal(own.state.hits, before + 3)
  assert.deepEqual(page.moves, [`${other.origin}/chat/c/42?tab=files#m5`])
})

test('when no other address answers the page stays and asks again until one does', async (t) => {
  const own = await startAddress(t, 0, 500)
  const other = await startAddress(t, 0, 503)
  const page = watchedPage(t, own.origin, [own.origin, other.origin])

  page.watcher.status('offline')
  await until(() => other.state.hits >= 3, 'the other address asked again and again')
  assert.deepEqual(page.moves, [])
  other.set({ status: 200 })
  await until(() => page.moves.length > 0, 'the move')
  assert.deepEqual(page.moves, [`${other.origin}/chat/c/42?tab=files#m5`])

  // Closed, a watcher never moves.
  const closed = watchedPage(t, own.origin, [own.origin, other.origin])
  closed.watcher.close()
  closed.watcher.status('offline')
  const hits = own.state.hits
  const moved = watchedPage(t, own.origin, [own.origin, other.origin])
  moved.watcher.status('offline')
  await until(() => moved.moves.length > 0, 'a watcher that was not closed moves')
  assert.equal(own.state.hits, hits + 2, 'the closed watcher probed nothing')
  assert.deepEqual(closed.moves, [])
})
