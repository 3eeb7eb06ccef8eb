/**
 * Inbound email bridge throughput (issue 18): `npm exec -- node bench/mail.ts [--messages 2000]
 * [--connections 8] [--db sqlite|postgres]`.
 * The same DKIM-signed messages (nodemailer's signer, relaxed/relaxed, 2048-bit RSA, one new
 * Message-ID each) are sent over SMTP, with --connections pooled connections, to two targets in this
 * run: a plain `smtp-server` sink that reads each message and discards it, and the gateway's mail
 * bridge, which verifies DKIM against a loopback DNS server, parses the mail and stores it in the
 * real chat module (a guest conversation of one invite) before it answers 250. Everything runs in
 * this process (sender, DNS server, gateway, chat module), so both figures include the sender's
 * cost; the process CPU per message is shown beside the rate. `--db postgres` takes DATABASE_URL
 * (the chat and gateway databases are made as the tests make theirs). The figures are a measurement: the
 * exit code is 0 either way.
 */
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { parseArgs } from 'node:util'
import { signedHeaders } from '@atrium/platform'
import { createTestDatabaseUrl } from '@atrium/platform/testing'
import { createTransport } from 'nodemailer'
import { SMTPServer } from 'smtp-server'
import { buildChat } from '../packages/chat/src/app.ts'
import { loadChatConfig } from '../packages/chat/src/config.ts'
import { buildGateway } from '../packages/gateway/src/app.ts'
import { loadGatewayConfig } from '../packages/gateway/src/config.ts'
import { startDnsPeer } from '../packages/gateway/test/dns-peer.ts'

const { values: args } = parseArgs({
  options: {
    messages: { type: 'string', default: '2000' },
    connections: { type: 'string', default: '8' },
    db: { type: 'string', default: 'sqlite' },
  },
})
const MESSAGES = Number(args.messages)
const CONNECTIONS = Number(args.connections)
const dialect = args.db
if (dialect !== 'sqlite' && dialect !== 'postgres') throw new Error('--db must be sqlite or postgres')
const SECRET = 'mail-bench-service-secret'.padEnd(40, '-')
const DOMAIN = 'atrium.test'
const OWNER = 9_100_000_001

// The test helpers clean up through a TestContext's `after`; here they run when the benchmark ends.
const cleanups: (() => unknown)[] = []
const context = { after: (fn: () => unknown) => cleanups.push(fn) } as unknown as TestContext
const directory = mkdtempSync(join(tmpdir(), 'atrium-bench-mail-'))
let databases = 0
const databaseUrl = async () =>
  dialect === 'sqlite' ? `sqlite:${join(directory, `${++databases}.db`)}` : createTestDatabaseUrl(context, 'postgres')

async function chatCall(base: string, path: string, body: object, crm?: number) {
  const url = `${base}${path}`
  const headers = { 'content-type': 'application/json', ...(crm ? { 'X-Crm': String(crm) } : {}) }
  const response = await fetch(url, {
    method: 'POST',
    headers: signedHeaders(SECRET, 'POST', path, headers),
    body: JSON.stringify(body),
  })
  const envelope = (await response.json()) as { result?: Record<string, unknown>; error?: unknown }
  if (!response.ok) throw new Error(`${path}: ${JSON.stringify(envelope.error)}`)
  return envelope.result!
}

async function startSink(): Promise<{ port: number; received: () => number; close: () => Promise<void> }> {
  let count = 0
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    disableReverseLookup: true,
    size: 1024 * 1024,
    logger: false,
    onData(stream, _session, callback) {
      stream.on('data', () => undefined)
      stream.on('end', () => {
        count++
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.server.address() as { port: number }
  return { port, received: () => count, close: () => new Promise((resolve) => server.close(() => resolve())) }
}

async function sendAll(port: number, to: string, messages: Buffer[]) {
  const transport = createTransport({
    pool: true,
    host: '127.0.0.1',
    port,
    maxConnections: CONNECTIONS,
    maxMessages: Infinity,
  })
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  let next = 0
  let refused = 0
  async function worker() {
    while (next < messages.length) {
      const raw = messages[next++]!
      try {
        await transport.sendMail({ envelope: { from: 'alice@example.org', to: [to] }, raw })
      } catch {
        refused++
      }
    }
  }
  await Promise.all(Array.from({ length: CONNECTIONS * 2 }, worker))
  const seconds = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpuBefore)
  transport.close()
  return { seconds, refused, cpuMs: (cpu.user + cpu.system) / 1000 }
}

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64')
const dns = await startDnsPeer(
  context,
  new Map([['s1._domainkey.example.org', [[`v=DKIM1; k=rsa; p=${p.slice(0, 200)}`, p.slice(200)]]]]),
)

const chat = await buildChat(
  loadChatConfig(
    { ChatDB: await databaseUrl(), ServiceSecret: SECRET, Outbox: { Path: join(directory, 'outbox') } },
    {},
  ),
)
const chatBase = await chat.listen({ host: '127.0.0.1', port: 0 })
await chatCall(chatBase, '/private/v1/set_profiles', { profiles: [{ member: String(OWNER), name: 'Owner' }] })
const { code } = await chatCall(chatBase, '/msg/v1/create_invite', { kind: 'personal' }, OWNER)
const gateway = await buildGateway(
  loadGatewayConfig(
    {
      GatewayDB: await databaseUrl(),
      ServiceSecret: SECRET,
      Modules: { chat: chatBase },
      Dns: { Servers: [dns.server], TimeoutMs: 2000, Tries: 1 },
      MailBridge: { Enabled: true, Host: '127.0.0.1', Port: 0, Domain: DOMAIN, PerSenderPerHour: 0 },
    },
    {},
  ),
)
await gateway.listen({ host: '127.0.0.1', port: 0 })
const sink = await startSink()

const signer = createTransport({
  streamTransport: true,
  buffer: true,
  newline: 'windows',
  dkim: {
    domainName: 'example.org',
    keySelector: 's1',
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }),
  },
})
const to = `${code}@${DOMAIN}`
const messages: Buffer[] = []
for (let i = 0; i < MESSAGES; i++) {
  const info = await signer.sendMail({
    from: 'Alice <alice@example.org>',
    to,
    subject: `Question ${i}`,
    text: `Hello, this is message ${i} of the mail bridge benchmark.\nIs the flat on Main Street still free?\n`,
    messageId: `<bench-${i}-${Date.now()}@example.org>`,
  })
  messages.push(info.message as Buffer)
}

// A short warm-up on each target, then the measured runs: sink first, bridge second.
await sendAll(sink.port, to, messages.slice(0, 50))
const sinkRun = await sendAll(sink.port, to, messages)
const warm = await sendAll(gateway.mailPort(), to, messages.slice(0, 50))
const bridgeRun = await sendAll(gateway.mailPort(), to, messages)
// The bridge stores each Message-ID once: the warm-up's 50 were answered 250 again, not stored twice.

const rate = (run: { seconds: number }) => MESSAGES / run.seconds
console.log(`mail bridge benchmark: ${MESSAGES} messages, ${CONNECTIONS} connections, ${dialect}`)
console.log(
  `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown'}, load ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`,
)
console.log('target            msg/s   CPU ms/msg  refused')
for (const [name, run] of [
  ['smtp-server sink', sinkRun],
  ['mail bridge', bridgeRun],
] as const) {
  console.log(
    `${name.padEnd(16)} ${rate(run).toFixed(0).padStart(6)}   ${(run.cpuMs / MESSAGES).toFixed(2).padStart(9)}  ${String(run.refused).padStart(7)}`,
  )
}
console.log(`bridge / sink: ${((rate(bridgeRun) / rate(sinkRun)) * 100).toFixed(1)}% of the sink's rate`)
if (warm.refused > 0 || bridgeRun.refused > 0)
  console.log('some messages were refused: the bridge figures are not valid')

await gateway.close()
await chat.close()
await sink.close()
for (const cleanup of cleanups.reverse()) await cleanup()
rmSync(directory, { recursive: true, force: true })
