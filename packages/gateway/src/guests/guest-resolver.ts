import { signedHeaders } from '@atrium/platform'
import type { ModuleInstances } from '../proxy/module-instances.ts'

const CALL_TIMEOUT_MS = 5000

/** The guest an invite code and device GUID resolve to (spec: "Authentication" 6). */
export interface ResolvedGuest {
  /** The guest id: the guest's member id in the chat module, and the id of its `code:` subject. */
  guest: number
  /** True for a guest of a personal invite, who may call (spec: "Authentication" 7). */
  callsAllowed: boolean
}

/**
 * Asks the chat module (GET /private/v1/call_guest, signed like every hop) which guest an invite
 * code and device GUID resolve to. Resolves undefined when they name no guest (an unknown or
 * revoked code, a device that never joined it); throws when the chat module cannot answer.
 */
export function createGuestResolver({ chat, serviceSecret }: { chat: ModuleInstances; serviceSecret: string }) {
  const base = chat.url.replace(/\/+$/, '')
  return async function resolveGuest(code: string, deviceGuid: string): Promise<ResolvedGuest | undefined> {
    const url = `${base}/private/v1/call_guest?${new URLSearchParams({ code, device_guid: deviceGuid })}`
    const response = await chat.fetch(url, {
      headers: signedHeaders(serviceSecret, 'GET', url, {}),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    })
    // 404: no such guest; 400: a malformed code or device. Either way, not a guest.
    if (response.status === 404 || response.status === 400) {
      await response.body?.cancel()
      return undefined
    }
    if (!response.ok) throw new Error(`the chat module answered ${response.status}`)
    const { result } = (await response.json()) as { result: { guest: string; calls_allowed: boolean } }
    return { guest: Number(result.guest), callsAllowed: result.calls_allowed }
  }
}

export type GuestResolver = ReturnType<typeof createGuestResolver>
