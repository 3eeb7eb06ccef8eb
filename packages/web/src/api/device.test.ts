import assert from 'node:assert/strict'
import { test } from 'node:test'
import { DEVICE_GUID_KEY, deviceGuid, randomGuid } from './device.ts'

function memoryStorage(initial: Record<string, string> = {}) {
  const items = new Map(Object.entries(initial))
  return {
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => items.set(key, value),
    items,
  }
}

test('a random GUID is a version-4 UUID the gateway and the chat module accept', () => {
  const guid = randomGuid()
  assert.match(guid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  assert.notEqual(randomGuid(), guid)
})

test('the device GUID is made once and then read back from storage', () => {
  const storage = memoryStorage()
  const first = deviceGuid(storage)
  assert.equal(storage.items.get(DEVICE_GUID_KEY), first)
  assert.equal(deviceGuid(storage), first)
})

test('a malformed stored value is replaced; without storage the GUID lives for the page', () => {
  const storage = memoryStorage({ [DEVICE_GUID_KEY]: 'bad guid!' })
  const guid = deviceGuid(storage, () => 'fresh-guid-0001')
  assert.equal(guid, 'fresh-guid-0001')
  assert.equal(storage.items.get(DEVICE_GUID_KEY), 'fresh-guid-0001')
  const blocked = {
    getItem: () => {
      throw new Error('SecurityError')
    },
    setItem: () => {
      throw new Error('SecurityError')
    },
  }
  assert.equal(
    deviceGuid(blocked, () => 'page-only-guid'),
    'page-only-guid',
  )
  assert.equal(
    deviceGuid(undefined, () => 'no-storage-guid'),
    'no-storage-guid',
  )
})
