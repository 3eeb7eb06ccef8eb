import assert from 'node:assert/strict'
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer } from 'node:http'
import type { TestContext } from 'node:test'
import type { DatabaseDialect, WebhookPayload } from '@atrium/platform'
import { listenRestartable } from '@atrium/platform/testing'
import { runCli } from '../src/cli/cli.ts'
import { createWebhooks } from '../src/webhooks/webhooks.repository.ts'
import { startEventsWorld } from './events.ts'
import { SERVICE_SECRET } from './support.ts'

/** Checks X-Signature as a receiver should: HMAC-SHA256 of the raw body, compared in constant time (docs/events.md). */
export function verifySignature(secret: string, rawBody: Buffer, signature: string): boolean {
  const expected = createHmac('sha256', secret).update(rawBody).digest()
  const given = Buffer.from(signature, 'hex')
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** One request the receiver got. */
export interface ReceivedWebhook {
  deliveryId: string
  attempt: number
  signature: string
  raw: Buffer
  payload: WebhookPayload
  host: string
  /** The status it was answered with. */
  status: number
}

/**
 * A webhook receiver on a loopback port: records every request and answers `status` (200 unless
 * set). `stop` closes the port (connections refused); `start` reopens the same port.
 */
export async function startWebhookReceiver(t: TestContext) {
  const requests: ReceivedWebhook[] = []
  let status = 200
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const raw = Buffer.concat(chunks)
      requests.push({
        deliveryId: String(request.headers['x-delivery-id'] ?? ''),
        attempt: Number(request.headers['x-delivery-attempt'] ?? 0),
        signature: String(request.headers['x-signature'] ?? ''),
        raw,
        payload: JSON.parse(raw.toString('utf8')) as WebhookPayload,
        host: String(request.headers.host ?? ''),
        status,
      })
      response.writeHead(status, { 'content-type': 'text/plain' })
      response.end(status === 200 ? 'ok' : 'receiver failure')
    })
  })
  const { port, start, stop } = await listenRestartable(t, server)

  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    requests,
    /** Requests answered 2xx: what the receiver accepted. */
    accepted: () => requests.filter((request) => request.status >= 200 && request.status < 300),
    /** Contents of the NewChatMessage events accepted, in arrival order. */
    contents: () =>
      requests
        .filter((request) => request.status === 200)
        .flatMap((request) => request.payload.events)
        .filter((event) => event.type === 'NewChatMessage')
        .map((event) => event.data.content as string),
    answer(code: number) {
      status = code
    },
    start,
    stop,
  }
}

/** Webhook settings that keep tests fast: quick retries, frequent app reloads, loopback receivers allowed. */
export const FAST_WEBHOOKS = {
  BackoffBaseMs: 50,
  BackoffMaxMs: 200,
  TimeoutMs: 2000,
  ReloadMs: 100,
  MaxAttempts: 20,
  AllowPrivateAddresses: true,
}

/** A chat module and a gateway sending webhooks; `appWith` makes an app with a callback and a chat of its own. */
export async function startWebhookWorld(
  t: TestContext,
  dialect: DatabaseDialect,
  { webhooks = {}, settings = {} }: { webhooks?: object; settings?: Record<string, unknown> } = {},
) {
  const world = await startEventsWorld(t, dialect, {
    settings: { ...settings, Webhooks: { ...FAST_WEBHOOKS, ...webhooks } },
  })
  const { gateway, chat } = world

  async function appWith(callbackUrl: string, eventTypes = ['NewChatMessage']) {
    const { store } = gateway.app
    const owner = await store.users.create()
    const { app } = await store.apps.create({ name: 'Shop', owner: owner.crm_id, callbackUrl, eventTypes })
    const created = await chat.client.call(
      'POST',
      '/msg/v1/create_chat',
      { 'X-Crm': String(owner.crm_id), 'X-AppId': String(app.id) },
      { type: 2, name: 'Support' },
    )
    assert.equal(created.status, 200, JSON.stringify(created.error))
    const chatId = created.result.chat.id as string
    const send = (content: string) => chat.client.user(owner.crm_id).ok('send_message', { chat_id: chatId, content })
    return { app, chatId, send }
  }

  /** The `atrium` CLI on this gateway's database. */
  async function atrium(...args: string[]) {
    let stdout = ''
    let stderr = ''
    const env = {
      GatewayDB: gateway.config.GatewayDB,
      ServiceSecret: SERVICE_SECRET,
      Webhooks__AllowPrivateAddresses: String(gateway.config.Webhooks.AllowPrivateAddresses),
    }
    const code = await runCli(args, env, {
      out: (text) => (stdout += `${text}\n`),
      err: (text) => (stderr += `${text}\n`),
    })
    return { code, stdout, stderr }
  }

  const deliveries = () => createWebhooks(gateway.app.store.db, gateway.app.store.nextTick)
  return { ...world, appWith, atrium, deliveries }
}
