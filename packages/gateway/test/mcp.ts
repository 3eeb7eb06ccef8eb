import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import type { TestContext } from 'node:test'
import { ContactFlags, type DatabaseDialect, RouteFlags, type Service } from '@atrium/platform'
import { createMigratedTestDatabaseUrl, listen } from '@atrium/platform/testing'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { startChat } from '../../chat/test/support.ts'
import { loadCrmConfig, loadWalletConfig } from '../../reference/src/config.ts'
import { buildCrm } from '../../reference/src/crm/app.ts'
import { crmMigrations } from '../../reference/src/crm/db/migrations/index.ts'
import { buildWallet } from '../../reference/src/wallet/app.ts'
import { walletMigrations } from '../../reference/src/wallet/db/migrations/index.ts'
import { createCrmClient } from '../../reference/test/crm.ts'
import { createWalletClient } from '../../reference/test/support.ts'
import type { SubjectKind } from '../src/mcp/grants.repository.ts'
import { ContactKind } from '../src/users/users.repository.ts'
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

/** A contact of a test user, in the shape the CRM answers it (a normalised value). */
export interface UserContact {
  kind: 'email' | 'phone'
  value: string
  verified: boolean
}

/** What a module's HTTP server received of one request. */
export interface SeenRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
}

/**
 * Starts a real module app on an ephemeral port, recording every request its HTTP server
 * receives, before the module's own checks (an unsigned request is recorded too).
 */
async function listenRecording(t: TestContext, app: Service) {
  const seen: SeenRequest[] = []
  app.server.on('request', (request: IncomingMessage) => {
    seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers })
  })
  return { base: await listen(t, app), seen }
}

/**
 * A gateway with the real chat, wallet and CRM modules (each on its own database of the dialect),
 * routed as in production (`/msg/`, `/wallet/`, `/crm/`, each RequireSession), and helpers to make
 * callers. The CRM gets its profiles from the gateway's profile sync; the wallet and the CRM record
 * the requests they receive (`walletSeen`, `crmSeen`).
 */
export async function startMcpStack(
  t: TestContext,
  dialect: DatabaseDialect,
  options: StartOptions & { chatInstancesBefore?: string[] } = {},
) {
  const chat = await startChat(t, dialect, { ServiceSecret: SERVICE_SECRET })
  const walletApp = await buildWallet(
    loadWalletConfig(
      { WalletDB: await createMigratedTestDatabaseUrl(t, dialect, walletMigrations), ServiceSecret: SERVICE_SECRET },
      {},
    ),
  )
  const walletModule = await listenRecording(t, walletApp)
  const wallet = createWalletClient(walletModule.base, SERVICE_SECRET)
  const crmApp = await buildCrm(
    loadCrmConfig(
      { CrmDB: await createMigratedTestDatabaseUrl(t, dialect, crmMigrations), ServiceSecret: SERVICE_SECRET },
      {},
    ),
  )
  const crmModule = await listenRecording(t, crmApp)
  const crm = createCrmClient(crmModule.base, SERVICE_SECRET)
  // Further instances of the chat module listed before the real one (a module with several instances).
  const chatModule = options.chatInstancesBefore ? [...options.chatInstancesBefore, chat.base] : chat.base
  const gateway = await startGateway(t, dialect, {
    ...options,
    settings: { Modules: { chat: chatModule, wallet: wallet.base, crm: crm.base }, ...options.settings },
  })
  const flags = RouteFlags.RequireSession
  await gateway.store.routes.add({ prefix: '/msg/', upstream: 'chat', flags })
  await gateway.store.routes.add({ prefix: '/wallet/', upstream: 'wallet', flags })
  await gateway.store.routes.add({ prefix: '/crm/', upstream: 'crm', flags })
  await gateway.store.routes.refresh()
  const { store } = gateway

  /**
   * A new user with these contacts (each flagged Verified or not), pushed to the chat module and
   * the CRM, with a session token (sent as a bearer) and the browser headers.
   */
  async function user(name = 'Ann', contacts: UserContact[] = []) {
    const created = await store.users.create({ name })
    for (const contact of contacts)
      await store.users.addContact(
        created.crm_id,
        contact.kind === 'email' ? ContactKind.Email : ContactKind.Phone,
        contact.value,
        contact.verified ? ContactFlags.Verified : 0,
      )
    await gateway.app.syncProfiles()
    const { token, session } = await store.sessions.create({
      crmId: created.crm_id,
      method: 'email_otp',
      ip: '127.0.0.1',
      userAgent: 'test',
    })
    return {
      crmId: created.crm_id,
      created: created.created,
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

  return {
    chat,
    wallet,
    crm,
    walletSeen: walletModule.seen,
    crmSeen: crmModule.seen,
    gateway,
    url: gateway.url,
    store,
    user,
    userKey,
    allow,
  }
}
