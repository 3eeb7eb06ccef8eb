/**
 * The server process of bench/mcp.ts: `node bench/mcp-servers.ts <dir>`. Runs the chat module and
 * a gateway (temp SQLite files in `dir`, logs off, rate limits out of reach) in one process, routes
 * `/msg/` to the chat, makes a user with an API key granted `chat_send` and a chat of theirs, then
 * prints one JSON line: the gateway's URL, the key and the chat id.
 */
import { join } from 'node:path'
import { RouteFlags } from '@atrium/platform'
import { buildChat } from '../packages/chat/src/app.ts'
import { loadChatConfig } from '../packages/chat/src/config.ts'
import { buildBenchGateway, listenOnLoopback } from './bench-gateway.ts'
import { stopWithParent } from './child-process.ts'

const SECRET = 'mcp-bench-service-secret'.padEnd(40, '-')
const dir = process.argv[2]!

const chat = await buildChat(
  loadChatConfig({ ChatDB: `sqlite:${join(dir, 'chat.db')}`, ServiceSecret: SECRET, LogLevel: 'silent' }, {}),
)
const chatPort = await listenOnLoopback(chat)
const { app } = await buildBenchGateway({
  GatewayDB: `sqlite:${join(dir, 'gateway.db')}`,
  ServiceSecret: SECRET,
  Modules: { chat: `http://127.0.0.1:${chatPort}` },
})
const { store } = app
await store.routes.add({ prefix: '/msg/', upstream: 'chat', flags: RouteFlags.RequireSession })
const user = await store.users.create({ name: 'Bench' })
await app.syncProfiles()
const { key } = await store.apiKeys.create({ keyType: 'user', crmId: user.crm_id, appId: 0, scopes: [], name: 'bench' })
await store.mcpGrants.allow({
  subject: { kind: 'user', id: user.crm_id },
  tool: 'chat_send',
  currency: '',
  perCall: 0,
  perDay: 0,
})
const port = await listenOnLoopback(app)
const url = `http://127.0.0.1:${port}`

const created = await fetch(`${url}/msg/v1/create_chat`, {
  method: 'POST',
  headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
  body: JSON.stringify({ type: 2, name: 'Bench', members: [] }),
})
const chatId = ((await created.json()) as { result: { chat: { id: string } } }).result.chat.id

stopWithParent(async () => {
  await app.close()
  await chat.close()
})
process.stdout.write(`${JSON.stringify({ url, key, chatId })}\n`)
