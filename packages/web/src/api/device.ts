/** The localStorage key of this browser's device GUID. */
export const DEVICE_GUID_KEY = 'atrium.deviceGuid'

const GUID = /^[A-Za-z0-9-]{8,64}$/

type DeviceStorage = Pick<Storage, 'getItem' | 'setItem'>

/** A random version-4 UUID; made with getRandomValues, which also works outside secure contexts. */
export function randomGuid(fill: (bytes: Uint8Array<ArrayBuffer>) => void = (bytes) => crypto.getRandomValues(bytes)) {
  const bytes = new Uint8Array(16)
  fill(bytes)
  bytes[6] = (bytes[6]! & 0x0f) | 0x40
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/**
 * This device's GUID, kept in local storage so it stays the same across visits (spec: the login
 * audit records it, and a guest's invite code plus this GUID name one guest conversation). When
 * storage is unavailable (blocked, private mode) a GUID lives for this page only.
 */
export function deviceGuid(storage: DeviceStorage | undefined, makeGuid: () => string = randomGuid): string {
  try {
    const stored = storage?.getItem(DEVICE_GUID_KEY)
    if (stored && GUID.test(stored)) return stored
  } catch {
    // Storage access can throw (disabled cookies); fall through to a fresh GUID.
  }
  const fresh = makeGuid()
  try {
    storage?.setItem(DEVICE_GUID_KEY, fresh)
  } catch {
    // Not kept: the next visit gets another GUID.
  }
  return fresh
}
