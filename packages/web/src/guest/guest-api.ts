import { createChatApi } from '../api/chat-api.ts'
import { createApiClient } from '../api/client.ts'

/** Header naming the invite a guest joined with; the chat module reads it with X-Device-Guid. */
export const INVITE_CODE_HEADER = 'x-invite-code'

/**
 * The chat operations as the guest of invite `code` on this device: every request names the
 * invite in X-Invite-Code beside the client's X-Device-Guid, which is how the chat module knows a
 * guest without a session (docs/chat-api.md, "Invites and guests"; the gateway passes both headers).
 */
export function createGuestChatApi(code: string, deviceGuid: string, options: GuestClientOptions = {}) {
  return createChatApi(createGuestClient(code, deviceGuid, options))
}

export interface GuestClientOptions {
  base?: string
  fetch?: typeof fetch
}

/** The API client of the guest of invite `code` on this device: X-Invite-Code on every request. */
export function createGuestClient(
  code: string,
  deviceGuid: string,
  { base = '', fetch: send = (...args: Parameters<typeof fetch>) => fetch(...args) }: GuestClientOptions = {},
) {
  return createApiClient({
    base,
    deviceGuid,
    fetch: (input, init = {}) => {
      const headers = new Headers(init.headers)
      headers.set(INVITE_CODE_HEADER, code)
      return send(input, { ...init, headers })
    },
  })
}
