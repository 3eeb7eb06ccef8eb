import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ADDRESS_KEPT_MS, ADDRESS_KEY, candidateOrigins, chooseAddress, onProjectDomain } from './address-choice.ts'
import { memoryStorage, startAddress } from './address-stand-in.ts'

const PROJECT = { hostname: 'example.com', origin: 'https://example.com' }

test('the page on the project domain probes p1, p2 and p3 of that domain; elsewhere nothing is probed', async () => {
  assert.deepEqual(candidateOrigins('example.com'), [
    'https://p1.example.com',
    'https://p2.example.com',
    'https://p3.example.com',
  ])
  assert.equal(onProjectDomain({ hostname: 'example.com' }, 'example.com'), true)
  for (const hostname of ['p1.example.com', 'localhost', '127.0.0.1', 'other.org'])
    assert.equal(onProjectDomain({ hostname }, 'example.com'), false, hostname)
  // A development build embeds no domain.
  assert.equal(onProjectDomain({ hostname: 'localhost' }, ''), false)
  let probes = 0
  const counting: typeof fetch = async () => {
    probes++
    return new Response('{}')
  }
  for (const location of [
    { hostname: 'localhost', origin: 'http://localhost:8080' },
    { hostname: 'p2.example.com', origin: 'https://p2.example.com' },
  ]) {
    const storage = memoryStorage()
    assert.equal(await chooseAddress({ location, domain: 'example.com', storage, fetch: counting }), undefined)
    assert.equal(storage.items.size, 0)
  }
  assert.equal(probes, 0)
})

test('the fastest address wins; a failing, refused or too slow one is skipped', async (t) => {
  const slow = await startAddress(t, 300)
  const fast = await startAddress(t, 0)
  const failing = await startAddress(t, 0, 500)
  const late = await startAddress(t, 2000)
  const gone = await startAddress(t)
  await gone.close()
  const storage = memoryStorage()
  const now = 1_000_000
  const candidates = [failing.origin, gone.origin, slow.origin, fast.origin, late.origin]
  const chosen = await chooseAddress({
    location: PROJECT,
    domain: 'example.com',
    storage,
    candidates,
    now: () => now,
    timeoutMs: 1000,
  })
  assert.equal(chosen, fast.origin)
  assert.deepEqual(JSON.parse(storage.items.get(ADDRESS_KEY)!), { origin: fast.origin, expires: now + ADDRESS_KEPT_MS })
  assert.deepEqual(
    [slow, fast, failing, late].map((address) => address.state.hits),
    [1, 1, 1, 1],
    'all probed at once',
  )

  // Only the failing and the too slow answer: the failing one is never chosen, the slow one times out.
  const none = await chooseAddress({
    location: PROJECT,
    domain: 'example.com',
    storage: memoryStorage(),
    candidates: [failing.origin, gone.origin, late.origin],
    timeoutMs: 200,
  })
  assert.equal(none, undefined, 'no address answered in time: the page stays')
})

test('the choice is kept until it expires or stops answering, then the addresses are probed again', async (t) => {
  const first = await startAddress(t, 0)
  const second = await startAddress(t, 150)
  const storage = memoryStorage()
  let now = 5_000_000
  const choose = () =>
    chooseAddress({
      location: PROJECT,
      domain: 'example.com',
      storage,
      candidates: [first.origin, second.origin],
      now: () => now,
      timeoutMs: 1000,
    })
  assert.equal(await choose(), first.origin)

  // Now the second is faster, but the kept choice still answers: the page sticks to it, and only
  // it is asked.
  first.set({ delayMs: 300 })
  second.set({ delayMs: 0 })
  now += ADDRESS_KEPT_MS - 1
  const secondHits = second.state.hits
  assert.equal(await choose(), first.origin)
  assert.equal(second.state.hits, secondHits, 'the other addresses are not probed while the choice is kept')

  // Expired: probed again, and the faster one is taken and kept.
  now += 1
  assert.equal(await choose(), second.origin)
  assert.equal(JSON.parse(storage.items.get(ADDRESS_KEY)!).origin, second.origin)

  // The kept address stops answering: probed again at once.
  await second.close()
  first.set({ delayMs: 0 })
  assert.equal(await choose(), first.origin)
  assert.deepEqual(JSON.parse(storage.items.get(ADDRESS_KEY)!), {
    origin: first.origin,
    expires: now + ADDRESS_KEPT_MS,
  })
})

test('a stored choice that is not JSON, or storage that refuses, only means probing again', async (t) => {
  const only = await startAddress(t, 0)
  const storage = memoryStorage()
  storage.setItem(ADDRESS_KEY, 'not json')
  const options = { location: PROJECT, domain: 'example.com', candidates: [only.origin] }
  assert.equal(await chooseAddress({ ...options, storage }), only.origin)
  const refusing = {
    getItem(): string | null {
      throw new Error('SecurityError')
    },
    setItem() {
      throw new Error('QuotaExceededError')
    },
  }
  assert.equal(await chooseAddress({ ...options, storage: refusing }), only.origin)
})
