import { signedHeaders } from '@atrium/platform'

const CALL_TIMEOUT_MS = 5000

/**
 * Asks the chat module (GET /private/v1/call_guest, signed like every hop) whether the guest an
 * invite code and device GUID resolve to may call: a guest of a personal invite may (spec:
 * "Authentication" 7). Resolves the guest id, or undefined for anyone else.
 */
export function createCallGuests({ chatUrl, serviceSecret }: { chatUrl: string; serviceSecret: string }) {
  const base = chatUrl.replace(/\/+$/, '')
  return async function callingGuest(code: string, deviceGuid: string): Promise<number | undefined> {
    const url = `${base}/private/v1/call_guest?${new URLSearchParams({ code, device_guid: deviceGuid })}`
    const response = await fetch(url, {
      headers: signedHeaders(serviceSecret, 'GET', url, {}),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    })
    // 404: no such guest; 400: a malformed code or device. Either way, not a guest who may call.
    if (response.status === 404 || response.status === 400) return undefined
    if (!response.ok) throw new Error(`the chat module answered ${response.status}`)
    const { result } = (await response.json()) as { result: { guest: string; calls_allowed: boolean } }
    return result.calls_allowed ? Number(result.guest) : undefined
  }
}

export type CallGuests = ReturnType<typeof createCallGuests>
