import type { ApiClient } from './client.ts'

/** What the browser tells the gateway about itself with each sign-in attempt (the login audit's fields). */
export interface ClientInfo {
  screen?: string
  deviceGuid?: string
  timezone?: string
  language?: string
}

/** A contact of the signed-in user. */
export interface ContactView {
  kind: 'email' | 'phone'
  value: string
  verified: boolean
  manuallyAdded: boolean
}

/** The signed-in user as the gateway shows them. */
export interface UserView {
  crmId: string
  name: string
  scopes: string[]
  contacts: ContactView[]
}

/** GET /auth/v1/session. */
export interface SessionView {
  crmId: string
  appId: string
  keyType: string
  scopes: string[]
  csrf: string
  user?: UserView
}

/** A person found by GET /auth/v1/people (docs/people.md). */
export interface PersonView {
  id: string
  name: string
  matched: 'name' | 'email' | 'phone'
}

/** A started email or phone sign-in. */
export interface Challenge {
  challengeId: string
  expiresAt: number
}

/** A completed sign-in; the session cookie came with it. */
export interface SignedIn {
  user: UserView
  csrf: string
  returnTo: string
}

/** One signed-in session of the user (GET /auth/v1/sessions). */
export interface SessionEntry {
  id: string
  method: string
  created: number
  lastSeen: number
  ip: string
  userAgent: string
  current: boolean
}

/** An account at a sign-in provider linked to the user (GET /auth/v1/federated/identities). */
export interface LinkedAccount {
  id: string
  provider: string
  name: string
  email: string
  created: number
  lastUsed: number
}

/** A registered Ed25519 key for UserKey sign-in (GET /auth/v1/user-keys). */
export interface UserKeyView {
  id: string
  name: string
  publicKey: string
  fingerprint: string
  created: number
  lastUsed: number
}

/** A wallet_send grant with its limits and what was sent against them today (GET /auth/v1/mcp/access). */
export interface SendLimitView {
  grantedTo: 'user' | 'app' | 'key'
  /** The one currency the grant covers; '' for any. */
  currency: string
  /** 0 for no limit. */
  perCall: number
  perDay: number
  spentToday: { currency: string; amount: number }[]
}

/** A tool an operator allowed for AI assistants (docs/mcp.md). */
export interface ToolAccessView {
  name: string
  title: string
  grantedTo: ('user' | 'app' | 'key')[]
  sends: SendLimitView[]
}

/** One of the user's API keys with the tools granted to it. */
export interface AssistantKeyView {
  id: string
  name: string
  prefix: string
  created: number
  lastUsed: number
  tools: ToolAccessView[]
}

/** GET /auth/v1/mcp/access: where assistants connect, and what they may do for the user. */
export interface McpAccessView {
  endpoint: string
  day: string
  tools: ToolAccessView[]
  keys: AssistantKeyView[]
}

/** A new API key (POST /auth/v1/keys): `key` is shown only in this answer. */
export interface CreatedApiKey {
  key: string
  apiKey: { id: string; name: string; prefix: string; created: number; lastUsed: number }
}

/** A registered passkey or security key (GET /auth/v1/passkeys). */
export interface CredentialView {
  id: string
  name: string
  kind: 'passkey' | 'security_key'
  backedUp: boolean
  multiDevice: boolean
  transports: string[]
  created: number
  lastUsed: number
}

/** The options of one WebAuthn ceremony, for @simplewebauthn/browser, and the id to answer it with. */
export interface Ceremony<Options> {
  challengeId: string
  options: Options
}

/** An entry of the sign-in picker (GET /auth/v1/federated/providers): a configured OAuth method or a partner. */
export interface FederatedProvider {
  id: string
  name: string
  /** A logo URL; '' for the built-in methods. */
  logo: string
  kind: 'oidc' | 'github' | 'telegram'
}

/**
 * The gateway's sign-in and session operations under /auth/v1 (email OTP with magic link, phone
 * OTP, who-am-I, sign out). A completed sign-in hands its CSRF token to the client.
 */
export function createAuthApi(client: ApiClient) {
  async function finish(path: string, body: object): Promise<SignedIn> {
    const signedIn = await client.post<SignedIn>(path, body)
    client.setCsrf(signedIn.csrf)
    return signedIn
  }

  return {
    /** The current session, or undefined when the browser is not signed in. */
    async session(): Promise<SessionView | undefined> {
      try {
        const session = await client.get<SessionView>('/auth/v1/session')
        client.setCsrf(session.csrf)
        return session
      } catch (error) {
        if ((error as { kind?: string }).kind === 'SessionRequired') return undefined
        throw error
      }
    },

    /** The providers the picker offers, read at run time so that a partner added later needs no new build. */
    federatedProviders: async () =>
      (await client.get<{ providers: FederatedProvider[] }>('/auth/v1/federated/providers')).providers,

    startEmail: (email: string, returnTo: string, info: ClientInfo) =>
      client.post<Challenge>('/auth/v1/email/start', { email, returnTo, client: info }),

    verifyEmail: (challengeId: string, code: string, info: ClientInfo) =>
      finish('/auth/v1/email/verify', { challengeId, code, client: info }),

    startPhone: (phone: string, returnTo: string, info: ClientInfo) =>
      client.post<Challenge>('/auth/v1/phone/start', { phone, returnTo, client: info }),

    verifyPhone: (challengeId: string, code: string, info: ClientInfo) =>
      finish('/auth/v1/phone/verify', { challengeId, code, client: info }),

    passkeyOptions: <Options>(email?: string) =>
      client.post<Ceremony<Options>>('/auth/v1/passkeys/authenticate/options', email ? { email } : {}),

    verifyPasskey: (challengeId: string, response: object, returnTo: string, info: ClientInfo) =>
      finish('/auth/v1/passkeys/authenticate/verify', { challengeId, response, returnTo, client: info }),

    credentials: async () => (await client.get<{ credentials: CredentialView[] }>('/auth/v1/passkeys')).credentials,

    registrationOptions: <Options>(kind: CredentialView['kind']) =>
      client.post<Ceremony<Options>>('/auth/v1/passkeys/register/options', { kind }),

    register: async (challengeId: string, name: string, response: object) =>
      (
        await client.post<{ credential: CredentialView }>('/auth/v1/passkeys/register/verify', {
          challengeId,
          name,
          response,
        })
      ).credential,

    renameCredential: async (id: string, name: string) =>
      (await client.patch<{ credential: CredentialView }>(`/auth/v1/passkeys/${id}`, { name })).credential,

    removeCredential: (id: string) => client.delete<{ removed: boolean }>(`/auth/v1/passkeys/${id}`),

    sessions: async () => (await client.get<{ sessions: SessionEntry[] }>('/auth/v1/sessions')).sessions,

    endSession: (id: string) => client.delete<{ sessions: number }>(`/auth/v1/sessions/${id}`),

    async logoutAll(): Promise<number> {
      const { sessions } = await client.post<{ sessions: number }>('/auth/v1/logout_all')
      client.setCsrf('')
      return sessions
    },

    linkedAccounts: async () =>
      (await client.get<{ identities: LinkedAccount[] }>('/auth/v1/federated/identities')).identities,

    unlinkAccount: (id: string) => client.delete<{ removed: boolean }>(`/auth/v1/federated/identities/${id}`),

    userKeys: async () => (await client.get<{ keys: UserKeyView[] }>('/auth/v1/user-keys')).keys,

    addUserKey: async (name: string, publicKey: string) =>
      (await client.post<{ userKey: UserKeyView }>('/auth/v1/user-keys', { name, publicKey })).userKey,

    removeUserKey: (id: string) => client.delete<{ removed: boolean }>(`/auth/v1/user-keys/${id}`),

    /** The MCP endpoint and the tools the user's assistants may use; NotFound where MCP is off. */
    mcpAccess: () => client.get<McpAccessView>('/auth/v1/mcp/access'),

    /** Mints a user API key for an assistant or a script; the whole key is in this answer only. */
    createApiKey: (name: string) => client.post<CreatedApiKey>('/auth/v1/keys', { name }),

    revokeApiKey: (id: string) => client.delete<{ revoked: boolean }>(`/auth/v1/keys/${id}`),

    /** The gateway's VAPID public key (base64url); fails with PushDisabled where Web Push is off. */
    pushPublicKey: async () => (await client.get<{ publicKey: string }>('/auth/v1/notifications/public_key')).publicKey,

    /** Stores this browser's push subscription (`PushSubscription.toJSON()`) for the signed-in user. */
    subscribePush: (subscription: PushSubscriptionJSON) =>
      client.post<{ subscription: { id: string; endpoint: string; created: number } }>(
        '/auth/v1/notifications/subscribe',
        subscription,
      ),

    unsubscribePush: (endpoint: string) =>
      client.post<{ removed: boolean }>('/auth/v1/notifications/unsubscribe', { endpoint }),

    /** Sends a test notification to each of the user's browsers. */
    testPush: () => client.post<{ sent: number; removed: number; failed: number }>('/auth/v1/notifications/test', {}),
    /** People by display name, or by a complete email or phone (docs/people.md). */
    searchPeople: async (q: string) =>
      (await client.get<{ people: PersonView[] }>(`/auth/v1/people?${new URLSearchParams({ q })}`)).people,

    /** Sets the own display name; it reaches everyone who shares a chat within moments. */
    setProfileName: (name: string) => client.post<{ crmId: string; name: string }>('/auth/v1/profile', { name }),

    async logout(): Promise<void> {
      await client.post('/auth/v1/logout')
      client.setCsrf('')
    },
  }
}

export type AuthApi = ReturnType<typeof createAuthApi>
