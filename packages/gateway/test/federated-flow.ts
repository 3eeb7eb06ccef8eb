import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import type { DatabaseDialect } from '@atrium/platform'
import { json } from '@atrium/platform/testing'
import { type StartOptions, startGateway } from './support.ts'

/** The public origin of test gateways that talk to OAuth peers; the peers send browsers back to it. */
export const GATEWAY_ORIGIN = 'https://atrium.example'
export const RETURN_URI = `${GATEWAY_ORIGIN}/auth/v1/federated/return`

/** A gateway with the given OAuth settings, and the calls a browser makes in a federated sign-in. */
export async function federatedGateway(
  t: TestContext,
  dialect: DatabaseDialect,
  oauth: object,
  now?: () => number,
  logger?: StartOptions['logger'],
) {
  const gateway = await startGateway(t, dialect, {
    settings: { PublicOrigin: GATEWAY_ORIGIN, OAuth: oauth },
    now,
    logger,
  })
  const stateCookie = `${gateway.config.Sessions.CookieName}_oauth`

  /** GET /federated/start: the provider's address and the state cookie the gateway set. */
  async function start(provider: string, returnTo?: string) {
    const query = new URLSearchParams({ provider, ...(returnTo === undefined ? {} : { returnTo }) })
    const response = await fetch(`${gateway.url}/auth/v1/federated/start?${query}`, { redirect: 'manual' })
    if (response.status !== 302) return { status: response.status, body: await json(response) }
    const cookie = response.headers.getSetCookie().find((line) => line.startsWith(`${stateCookie}=`)) ?? ''
    return {
      status: 302,
      location: new URL(response.headers.get('location') ?? ''),
      setCookie: cookie,
      cookie: cookie.split(';')[0] ?? '',
    }
  }

  /** GET /federated/return with the provider's query, as the browser holding `cookie` would send it. */
  async function finish(back: URL | string, cookie: string) {
    const url = new URL(back)
    const response = await fetch(`${gateway.url}${url.pathname}${url.search}`, {
      redirect: 'manual',
      headers: cookie ? { cookie } : {},
    })
    const setCookies = response.headers.getSetCookie()
    const session = setCookies.find((line) => line.startsWith(`${gateway.config.Sessions.CookieName}=`))
    return {
      status: response.status,
      location: response.headers.get('location') ?? '',
      session: session?.split(';')[0] ?? '',
      setCookies,
      body: response.status === 302 ? undefined : await json(response),
    }
  }

  /** The signed-in user of a session cookie, by GET /auth/v1/session. */
  async function whoIs(sessionCookie: string) {
    const response = await fetch(`${gateway.url}/auth/v1/session`, { headers: { cookie: sessionCookie } })
    const body = await json(response)
    assert.equal(response.status, 200, JSON.stringify(body))
    return body.result as { crmId: string; user: { contacts: { value: string; verified: boolean }[] } }
  }

  async function audit() {
    return gateway.store.db
      .selectFrom('login_audit')
      .select(['method', 'success', 'reason', 'crm_id'])
      .orderBy('id')
      .execute()
  }

  return { ...gateway, start, finish, whoIs, audit }
}
