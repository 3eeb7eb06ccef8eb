import { type AuthApi, createAuthApi } from './api/auth-api.ts'
import { type ChatApi, createChatApi } from './api/chat-api.ts'
import { type ApiClient, createApiClient } from './api/client.ts'

/** The client's connections to the gateway, made once at start and handed to the screens. */
export interface Services {
  client: ApiClient
  auth: AuthApi
  chat: ChatApi
  /** The gateway's SSE stream (spec: GET /auth/v1/subscribe). */
  subscribeUrl: string
}

/** The services of a page served by the gateway itself (same origin). */
export function createServices(deviceGuid: string, base = ''): Services {
  const client = createApiClient({ base, deviceGuid })
  return {
    client,
    auth: createAuthApi(client),
    chat: createChatApi(client),
    subscribeUrl: `${base}/auth/v1/subscribe`,
  }
}
