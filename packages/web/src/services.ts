import { type AuthApi, createAuthApi } from './api/auth-api.ts'
import { type ChatApi, createChatApi } from './api/chat-api.ts'
import { type ApiClient, createApiClient } from './api/client.ts'
import { type CallApi, createCallApi } from './calls/call-api.ts'

/** The client's connections to the gateway, made once at start and handed to the screens. */
export interface Services {
  client: ApiClient
  auth: AuthApi
  chat: ChatApi
  /** Calls: the call operations and the gateway's ICE servers (docs/calls.md). */
  calls: CallApi
  /** The gateway's SSE stream (spec: GET /auth/v1/subscribe). */
  subscribeUrl: string
}

/**
 * The services of a page served by the gateway itself (same origin); `send` is the fetch they use
 * (the page's, taking the answers its start-up script asked for early).
 */
export function createServices(deviceGuid: string, base = '', send?: typeof fetch): Services {
  const client = createApiClient({ base, deviceGuid, fetch: send })
  return {
    client,
    auth: createAuthApi(client),
    chat: createChatApi(client),
    calls: createCallApi(client),
    subscribeUrl: `${base}/auth/v1/subscribe`,
  }
}
