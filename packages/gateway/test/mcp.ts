import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import { type DatabaseDialect, RouteFlags, verifyHop } from '@atrium/platform'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { startChat } from '../../chat/test/support.ts'
import { startWallet } from '../../reference/test/support.ts'
import type { SubjectKind } from '../src/mcp/grants.repository.ts'
import { SERVICE_SECRET, type StartOptions, startGateway } from './support.ts'

/** The MCP endpoint's path on a gateway. */
export const MCP_PATH = '/auth/v1/mcp'

/** An MCP client of the official SDK connected to the gateway with the given credential headers. */
export async function connectMcp(t: TestContext, gatewayUrl: string, headers: Record<string, string>) {
  const client = new Client({ name: 'atrium-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(MCP_PATH, gatewayUrl), { requestInit: { headers } })
  await client.connect(transport)
  t.after(() => client.close())
  return client
}

/** A user profile as the CRM's user_info answers it. */
export interface CrmProfile {
  crm_id: string
  name: string
  contacts: { kind: 'email' | 'phone' | 'telegram'; value: string; verified: boolean }[]
  created: string
}

/** What a contract peer saw of one request. */
export interface PeerRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}

interface PeerAnswer {
  status: number
  headers?: Record<string, string>
  body: unknown
}

function envelopeError(status: number, code: number, message: string): PeerAnswer {
  return { status, body: { error: { code, message }, id: 'peer' } }
}

/**
 * A stand-in on a real port for module contracts that are not in this project yet, answering
 * exactly as the contract says (`profiles` may be added to at any time): the CRM's `GET /crm/v1/user_info?crm_id` (crm_id optional: the
 * caller) and the wallet's idempotent `POST /wallet/v1/send` (a replay answers the first result
 * with `Idempotent-Replayed: true`; the same key with another body 422). Every request must carry
 * a valid hop signature (else 401, code 1008) and X-Crm (else 401). Records what it saw.
 */
export async function startContractPeer(t: TestContext, profiles: CrmProfile[] = []) {
  const seen: PeerRequest[] = []
  const sends = new Map<string, { body: string; result: unknown }>()
  let transfers = 0
  const server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body })
      const answer = handle(request.method ?? '', request.url ?? '', request.headers, body)
      response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
      response.end(JSON.stringify(answer.body))
    })
  })

  function handle(method: string, url: string, headers: IncomingHttpHeaders, body: string): PeerAnswer {
    const hop = { method, url, headers: headers as Record<string, string> }
    if (!verifyHop(SERVICE_SECRET, hop)) return envelopeError(401, 1008, 'not signed by the gateway')
    const caller = headers['x-crm']
    if (typeof caller !== 'string') return envelopeError(401, 1008, 'a signed-in user is needed (X-Crm)')
    const { pathname, searchParams } = new URL(url, 'http://peer')
    if (method === 'GET' && pathname === '/crm/v1/user_info') {
      const wanted = searchParams.get('crm_id') ?? caller
      if (!/^[1-9][0-9]{0,15}$/.test(wanted)) return envelopeError(400, 1000, 'crm_id must be a positive id')
      const profile = profiles.find((candidate) => candidate.crm_id === wanted)
      return profile
        ? { status: 200, body: { result: profile, id: 'peer' } }
        : envelopeError(404, 1004, `no user ${wanted}`)
    }
    if (method === 'POST' && pathname === '/wallet/v1/send') {
      const key = headers['idempotency-key']
      if (typeof key !== 'string') return envelopeError(400, 1000, 'Idempotency-Key is required')
      const earlier = sends.get(`${caller}:${key}`)
      if (earlier) {
        return earlier.body === body
          ? { status: 200, headers: { 'idempotent-replayed': 'true' }, body: { result: earlier.result, id: 'peer' } }
          : envelopeError(422, 1000, 'the idempotency key was used with another body')
      }
      const send = JSON.parse(body) as { to: string; currency: string; amount: number; comment?: string }
      transfers += 1
      const result = {
        transaction: {
          id: String(1000 + transfers),
          currency: send.currency,
          tx_type: 2,
          state: 2,
          amount: -send.amount,
          fee: 0,
          datetime: new Date().toISOString(),
          comment: send.comment ?? '',
          partner: { crm_id: send.to, name: '' },
        },
        balance: { currency: send.currency, balance: 100 - send.amount, hold: 0, available: 100 - send.amount },
      }
      sends.set(`${caller}:${key}`, { body, result })
      return { status: 200, body: { result, id: 'peer' } }
    }
    return envelopeError(404, 1004, `no route ${method} ${pathname}`)
  }

  t.after(() => {
    server.closeAllConnections()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { base, seen, profiles, transfers: () => transfers }
}

/**
 * A gateway with the real chat and wallet modules and a contract peer for the CRM, routed as in
 * production (`/msg/`, `/wallet/`, `/crm/`, each RequireSession), and helpers to make callers.
 */
export async function startMcpStack(t: TestContext, dialect: DatabaseDialect, options: StartOptions = {}) {
  const chat = await startChat(t, dialect, { ServiceSecret: SERVICE_SECRET })
  const wallet = await startWallet(t, dialect, { ServiceSecret: SERVICE_SECRET })
  const peer = await startContractPeer(t)
  const gateway = await startGateway(t, dialect, {
    ...options,
    settings: { Modules: { chat: chat.base, wallet: wallet.base, crm: peer.base }, ...options.settings },
  })
  const flags = RouteFlags.RequireSession
  await gateway.store.routes.add({ prefix: '/msg/', upstream: 'chat', flags })
  await gateway.store.routes.add({ prefix: '/wallet/', upstream: 'wallet', flags })
  await gateway.store.routes.add({ prefix: '/crm/', upstream: 'crm', flags })
  await gateway.store.routes.refresh()
  const { store } = gateway

  /** A new user, known to the chat module, with a session token (sent as a bearer) and the browser headers. */
  async function user(name = 'Ann') {
    const created = await store.users.create({ name })
    await gateway.app.syncProfiles()
    const { token, session } = await store.sessions.create({
      crmId: created.crm_id,
      method: 'email_otp',
      ip: '127.0.0.1',
      userAgent: 'test',
    })
    return {
      crmId: created.crm_id,
      token,
      bearer: { Authorization: `Bearer ${token}` },
      browser: {
        Cookie: `${gateway.config.Sessions.CookieName}=${token}`,
        'X-CSRF-Token': session.csrf,
        'Content-Type': 'application/json',
      },
    }
  }

  /** An API key acting as the user; its id and the header to send it in. */
  async function userKey(crmId: number) {
    const { key, row } = await store.apiKeys.create({ keyType: 'user', crmId, appId: 0, scopes: [], name: 'assistant' })
    return { id: row.id, key, headers: { Authorization: `Bearer ${key}` } }
  }

  async function allow(
    kind: SubjectKind,
    id: number,
    tools: string[],
    limits: { currency?: string; perCall?: number; perDay?: number } = {},
  ) {
    for (const tool of tools) {
      await store.mcpGrants.allow({
        subject: { kind, id },
        tool,
        currency: limits.currency ?? '',
        perCall: Math.round((limits.perCall ?? 0) * 100),
        perDay: Math.round((limits.perDay ?? 0) * 100),
      })
    }
  }

  return { chat, wallet, peer, gateway, url: gateway.url, store, user, userKey, allow }
}
