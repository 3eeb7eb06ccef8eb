import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { type DatabaseDialect, signedHeaders } from '@atrium/platform'
import { createMigratedTestDatabaseUrl, json, listen } from '@atrium/platform/testing'
import { buildChat } from '../src/app.ts'
import { loadChatConfig } from '../src/config.ts'
import { chatMigrations } from '../src/db/migrations/index.ts'

/** The inter-service secret test gateways sign with. */
export const SERVICE_SECRET = 'chat-test-service-secret'.padEnd(40, '-')

export interface CallResult {
  status: number
  // biome-ignore lint/suspicious/noExplicitAny: tests assert on the shape at run time
  result: any
  error?: { code: number; message: string; details?: unknown }
}

type Query = Record<string, string | number | boolean | undefined>

/** Calls the chat module as the gateway would: signed, with the identity headers given. */
export function createChatClient(base: string) {
  async function call(
    method: 'GET' | 'POST',
    path: string,
    headers: Record<string, string>,
    payload?: object,
  ): Promise<CallResult> {
    let url = path
    const entries =
      method === 'GET' ? Object.entries((payload ?? {}) as Query).filter(([, value]) => value !== undefined) : []
    if (entries.length > 0)
      url += `?${new URLSearchParams(entries.map(([key, value]): [string, string] => [key, String(value)]))}`
    const body = method === 'POST' ? JSON.stringify(payload ?? {}) : undefined
    const all = method === 'POST' ? { ...headers, 'content-type': 'application/json' } : headers
    const response = await fetch(`${base}${url}`, {
      method,
      headers: signedHeaders(SERVICE_SECRET, method, url, all),
      body,
    })
    const envelope = await json(response)
    return { status: response.status, result: envelope.result, error: envelope.error }
  }

  function caller(headers: Record<string, string>) {
    return {
      post: (operation: string, body: object = {}) => call('POST', `/msg/v1/${operation}`, headers, body),
      get: (operation: string, query: Query = {}) => call('GET', `/msg/v1/${operation}`, headers, query),
      /** Posts and asserts success; returns the result. */
      async ok(operation: string, body: object = {}) {
        const response = await call('POST', `/msg/v1/${operation}`, headers, body)
        assert.equal(response.status, 200, `${operation}: ${JSON.stringify(response.error)}`)
        return response.result
      },
      /** Gets and asserts success; returns the result. */
      async read(operation: string, query: Query = {}) {
        const response = await call('GET', `/msg/v1/${operation}`, headers, query)
        assert.equal(response.status, 200, `${operation}: ${JSON.stringify(response.error)}`)
        return response.result
      },
    }
  }

  return {
    base,
    call,
    /** A signed-in user with this CRM id. */
    user: (crmId: number) => caller({ 'X-Crm': String(crmId) }),
    /** A guest of an invite code on one device. */
    guest: (code: string, deviceGuid: string) => caller({ 'X-Invite-Code': code, 'X-Device-Guid': deviceGuid }),
    /**
     * Registers people as the gateway's profile sync does (POST /private/v1/set_profiles), so that
     * chats and memberships may name them: the chat module refuses ids it does not know
     * (UserNotFound). Give numbers for people without a display name, or [id, name] pairs.
     */
    async register(...people: Array<number | [number, string]>): Promise<void> {
      const profiles = people.map((person) =>
        typeof person === 'number'
          ? { member: String(person), name: '' }
          : { member: String(person[0]), name: person[1] },
      )
      // set_profiles takes up to 500 a call.
      for (let start = 0; start < profiles.length; start += 500) {
        const batch = profiles.slice(start, start + 500)
        const response = await call('POST', '/private/v1/set_profiles', {}, { profiles: batch })
        assert.equal(response.status, 200, `set_profiles: ${JSON.stringify(response.error)}`)
      }
    },
    /** GET /private/v1/events. */
    events: (query: Query = {}) => call('GET', '/private/v1/events', {}, query),
  }
}

export type ChatClient = ReturnType<typeof createChatClient>
export type ChatCaller = ReturnType<ChatClient['user']>

/** Starts the chat module on a fresh database of the dialect and an ephemeral port. */
export async function startChat(t: TestContext, dialect: DatabaseDialect, settings: Record<string, unknown> = {}) {
  return startChatOn(t, await createMigratedTestDatabaseUrl(t, dialect, chatMigrations), settings)
}

/** Starts a chat instance on an existing database, e.g. a second instance on the same PostgreSQL schema. */
export async function startChatOn(t: TestContext, url: string, settings: Record<string, unknown> = {}) {
  const config = loadChatConfig({ ChatDB: url, ServiceSecret: SERVICE_SECRET, ...settings }, {})
  // Only errors are logged, so a 500 in a test shows its cause.
  const app = await buildChat(config, { logger: { level: 'error' } })
  return createChatClient(await listen(t, app))
}

/** Creates a group chat owned by `owner` with the given members (registered with chat.register first); returns its id. */
export async function createGroup(owner: ChatCaller, members: number[], type = 2, name = 'Team'): Promise<string> {
  const { chat } = await owner.ok('create_chat', { type, name, members: members.map(String) })
  return chat.id
}
