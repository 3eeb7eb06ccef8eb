import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { type DatabaseDialect, signedHeaders } from '@atrium/platform'
import { createMigratedTestDatabaseUrl, json, listen } from '@atrium/platform/testing'
import { loadWalletConfig } from '../src/config.ts'
import { buildWallet } from '../src/wallet/app.ts'
import { walletMigrations } from '../src/wallet/db/migrations/index.ts'

/** The inter-service secret test callers sign with, unless a test passes its own ServiceSecret. */
export const SERVICE_SECRET = 'wallet-test-service-secret'.padEnd(40, '-')

export interface CallResult {
  status: number
  headers: Headers
  // biome-ignore lint/suspicious/noExplicitAny: tests assert on the shape at run time
  result: any
  error?: { code: number; message: string; details?: unknown }
}

type Query = Record<string, string | number | undefined>

/** Calls the wallet module as the gateway would: signed, with the identity headers given. */
export function createWalletClient(base: string, secret = SERVICE_SECRET) {
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
    const all = method === 'POST' ? { ...headers, 'content-type': 'application/json' } : headers
    const response = await fetch(`${base}${url}`, {
      method,
      headers: signedHeaders(secret, method, url, all),
      body: method === 'POST' ? JSON.stringify(payload ?? {}) : undefined,
    })
    const envelope = await json(response)
    return { status: response.status, headers: response.headers, result: envelope.result, error: envelope.error }
  }

  async function ok(method: 'GET' | 'POST', path: string, headers: Record<string, string>, payload?: object) {
    const response = await call(method, path, headers, payload)
    assert.equal(response.status, 200, `${method} ${path}: ${JSON.stringify(response.error)}`)
    return response.result
  }

  return {
    base,
    call,
    /** A signed-in user, optionally calling through an app. */
    user(crmId: number, appId?: number) {
      const headers: Record<string, string> = { 'X-Crm': String(crmId) }
      if (appId !== undefined) headers['X-AppId'] = String(appId)
      return {
        get: (operation: string, query: Query = {}) => call('GET', `/wallet/v1/${operation}`, headers, query),
        post: (operation: string, body: object, extra: Record<string, string> = {}) =>
          call('POST', `/wallet/v1/${operation}`, { ...headers, ...extra }, body),
        read: (operation: string, query: Query = {}) => ok('GET', `/wallet/v1/${operation}`, headers, query),
        send: (to: number, currency: string, amount: number, comment?: string) =>
          ok('POST', '/wallet/v1/send', headers, { to: String(to), currency, amount, comment }),
      }
    },
    /** Credits a wallet through the internal deposit operation (as a payment module would). */
    deposit: (crmId: number, currency: string, amount: number, headers: Record<string, string> = {}) =>
      ok('POST', '/private/v1/deposit', headers, { crm_id: String(crmId), currency, amount }),
    internal: (operation: string, body: object, headers: Record<string, string> = {}) =>
      call('POST', `/private/v1/${operation}`, headers, body),
    /** GET /private/v1/monitoring_stats. */
    monitoringStats: () => ok('GET', '/private/v1/monitoring_stats', {}),
    /** GET /private/v1/events. */
    events: (query: Query = {}) => call('GET', '/private/v1/events', {}, query),
  }
}

export type WalletClient = ReturnType<typeof createWalletClient>

/** Starts the wallet module on a database (a fresh one of the dialect by default) and an ephemeral port. */
export async function startWallet(
  t: TestContext,
  dialect: DatabaseDialect,
  settings: Record<string, unknown> = {},
  url?: string,
  now?: () => number,
) {
  const config = loadWalletConfig(
    {
      WalletDB: url ?? (await createMigratedTestDatabaseUrl(t, dialect, walletMigrations)),
      ServiceSecret: SERVICE_SECRET,
      ...settings,
    },
    {},
  )
  const app = await buildWallet(config, { logger: { level: process.env.WALLET_LOG ?? 'error' }, now })
  return createWalletClient(await listen(t, app), config.ServiceSecret)
}
