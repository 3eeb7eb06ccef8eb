import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { type DatabaseDialect, signedHeaders } from '@atrium/platform'
import { createMigratedTestDatabaseUrl, json, listen } from '@atrium/platform/testing'
import { loadCrmConfig } from '../src/config.ts'
import { buildCrm } from '../src/crm/app.ts'
import { crmMigrations } from '../src/crm/db/migrations/index.ts'
import { type CallResult, SERVICE_SECRET } from './support.ts'

/** Calls the CRM module as the gateway would: signed, with the identity headers given. */
export function createCrmClient(base: string, secret = SERVICE_SECRET) {
  async function call(
    method: 'GET' | 'POST',
    path: string,
    headers: Record<string, string> = {},
    payload?: unknown,
  ): Promise<CallResult> {
    const all = method === 'POST' ? { ...headers, 'content-type': 'application/json' } : headers
    const response = await fetch(`${base}${path}`, {
      method,
      headers: signedHeaders(secret, method, path, all),
      body: method === 'POST' ? (typeof payload === 'string' ? payload : JSON.stringify(payload ?? {})) : undefined,
    })
    const envelope = await json(response)
    return { status: response.status, headers: response.headers, result: envelope.result, error: envelope.error }
  }

  /** GET /crm/v1/user_info with the identity headers given (none: anonymous). */
  function userInfo(headers: Record<string, string>, crmId?: string) {
    return call('GET', `/crm/v1/user_info${crmId === undefined ? '' : `?crm_id=${encodeURIComponent(crmId)}`}`, headers)
  }

  return {
    base,
    call,
    userInfo,
    /** POST /private/v1/set_profiles with `profiles`; a string body is sent as it is. */
    setProfiles: (profiles: unknown) =>
      call('POST', '/private/v1/set_profiles', {}, typeof profiles === 'string' ? profiles : { profiles }),
    /** A signed-in user (X-Crm, a session). */
    user(crmId: number | string) {
      return { info: (of?: string) => userInfo({ 'X-Crm': String(crmId), 'X-KeyType': 'session' }, of) }
    },
    /** Stores profiles and expects the CRM to take them. */
    async register(profiles: unknown[]) {
      const stored = await call('POST', '/private/v1/set_profiles', {}, { profiles })
      assert.equal(stored.status, 200, JSON.stringify(stored.error))
      return stored.result as { stored: number; changed: number }
    },
  }
}

export type CrmClient = ReturnType<typeof createCrmClient>

/** Starts the CRM module on a database (a fresh one of the dialect by default) and an ephemeral port. */
export async function startCrm(t: TestContext, dialect: DatabaseDialect, url?: string, secret = SERVICE_SECRET) {
  const config = loadCrmConfig(
    { CrmDB: url ?? (await createMigratedTestDatabaseUrl(t, dialect, crmMigrations)), ServiceSecret: secret },
    {},
  )
  const app = await buildCrm(config, { logger: { level: process.env.CRM_LOG ?? 'error' } })
  return createCrmClient(await listen(t, app), config.ServiceSecret)
}
