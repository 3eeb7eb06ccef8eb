/**
 * Live events benchmark (issue 5): SSE subscribers held open on one gateway process, fed by the real
 * chat module through its events endpoint, side by side with nginx + nchan in the same run.
 *   npm exec -- node bench/sse.ts [--subscribers 10000] [--fanout 10] [--rates 50,500]
 *     [--seconds 15] [--warmup 3] [--clients 2] [--db sqlite|postgres] [--targets gateway,nchan]
 *     [--workers 1] [--profile] [--chunk-subjects 200] [--nchan-module /usr/lib/nginx/modules/ngx_nchan_module.so]
 * Targets: `gateway`, `nchan`, and the runtime's floor `node-response` / `node-socket` (bench/sse-node.ts:
 * bare node:http with nchan's publish protocol, writing through the response or straight to the socket),
 * and `node-poll`, the floor doing the gateway's work (bench/sse-node-poll.ts: bare node:http that
 * long-polls the same chat module for its streams' subjects, in chunks of --chunk-subjects, and
 * writes straight to the socket).
 * Gateway side: the chat module (bench/sse-module.ts) and the gateway (bench/sse-gateway.ts) each in
 * their own process; the gateway's users and sessions are made through its store before the run.
 * Each subscriber is one HTTP/1.1 SSE stream with its session cookie, from --clients processes
 * (bench/sse-client.ts). The subscribers are split into group chats of --fanout members plus a
 * publishing user who subscribes to nothing, so each message reaches exactly --fanout streams.
 * The publisher posts send_message to the chat module at each rate, with its send time in the text.
 * nchan side: one worker, channels of --fanout subscribers, the publisher POSTs to the channel.
 * Latency is arrival minus the publisher's send time (so it includes the module's commit); CPU is
 * the gateway process's (nginx worker's) from /proc over the measured window; memory per connection
 * is the RSS with every stream open minus the RSS before they opened, divided by their number.
 * The gateway and nginx each hold every stream, so `ulimit -n` must exceed --subscribers (plus a
 * few hundred), and each client process holds its share. Beyond one process's file limit, `--workers N`
 * runs the gateway as `npm start` does with `Workers` = N (the kernel spreads the streams over the
 * workers by SO_REUSEPORT); its CPU and memory are then the sum over the primary and its workers,
 * with no garbage collection before the memory reading (`--profile` needs one process). Each
 * client process connects from its own loopback address (127.0.0.2, 127.0.0.3, …) for the ports.
 * `--db postgres` takes DATABASE_URL. The figures are a measurement: the exit code is 0 either way.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { timetickAt } from '@atrium/platform'
import { call, provisionDatabase, registerUsers, SECRET } from './chat-setup.ts'
import { percentile } from './http-load.ts'
import type { StreamSpec } from './sse-client.ts'
import type { SseGatewayReady, SseGatewaySpec } from './sse-gateway.ts'
import { marker, publish, startSubscribers } from './sse-load.ts'
import { startNchan } from './sse-nchan.ts'
import { cpuMicros, freePort, rssBytes, startNodeServer, treeOf } from './sse-processes.ts'
import { summariseProfile } from './sse-profile.ts'
import { type Memory, number, printTables, type Row } from './sse-report.ts'

const { values: args } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '10000' },
    fanout: { type: 'string', default: '10' },
    rates: { type: 'string', default: '50,500' },
    seconds: { type: 'string', default: '15' },
    warmup: { type: 'string', default: '3' },
    clients: { type: 'string', default: '2' },
    db: { type: 'string', default: 'sqlite' },
    targets: { type: 'string', default: 'gateway,nchan' },
    workers: { type: 'string', default: '1' },
    profile: { type: 'boolean', default: false },
    'chunk-subjects': { type: 'string', default: '' },
    'nchan-module': { type: 'string', default: '/usr/lib/nginx/modules/ngx_nchan_module.so' },
  },
})
const subscribers = Number(args.subscribers)
const fanout = Number(args.fanout)
const rates = args.rates.split(',').map(Number)
const seconds = Number(args.seconds)
const warmup = Number(args.warmup)
const workers = Number(args.workers)
const dialect = args.db
if (dialect !== 'sqlite' && dialect !== 'postgres') throw new Error('--db must be sqlite or postgres')
if (subscribers % fanout !== 0) throw new Error('--subscribers must be a multiple of --fanout')
if (!Number.isInteger(workers) || workers < 1) throw new Error('--workers must be a whole number above 0')
const groups = subscribers / fanout
/** The member who posts every message; nobody subscribes as them, so their own items are never polled. */
const PUBLISHER = 9_000_000_001
const HEARTBEAT_SECONDS = 15
/** How long after the window its last events may still arrive and count. */
const DELIVERY_GRACE_MS = 3000
const epochNow = () => performance.timeOrigin + performance.now()
const IDLE_SECONDS = 5

interface Target {
  name: string
  /** The processes whose CPU and memory are measured. */
  pids(): number[]
  port: number
  streams: StreamSpec[]
  send(index: number): Promise<void>
  /** The module feeding the gateway, whose CPU is shown beside the gateway's. */
  modulePid?: number
  /** Collects garbage before a memory reading and answers the V8 heap in use (the gateway only). */
  collectGarbage?: () => Promise<number>
  /** Starts or stops the CPU profile (the gateway only). */
  toggleProfile?: () => void
  profilePath?: string
  stop(): Promise<void>
}

/** Asks a Node target (run with --expose-gc) to collect garbage; answers its V8 heap in use, which it writes on SIGHUP. */
async function collectGarbage(pid: number, memoryFile: string): Promise<number> {
  rmSync(memoryFile, { force: true })
  process.kill(pid, 'SIGHUP')
  for (let tries = 0; tries < 50 && !existsSync(memoryFile); tries++) await sleep(100)
  return (JSON.parse(readFileSync(memoryFile, 'utf8')) as { heapUsed: number }).heapUsed
}

const rows: Row[] = []
const memory: Memory[] = []

/**
 * The chat module feeding a target, in its own process: `groups` makes the benchmark's group chats
 * of --fanout members each (their users registered, the publisher in every one), and `send` posts
 * the marked message of event `index` to its group.
 */
async function startChatFeed(chatDb: { url: string }) {
  const chat = await startNodeServer<{ base: string }>(
    join(import.meta.dirname, 'sse-module.ts'),
    [chatDb.url],
    '',
    60_000,
  )
  const base = chat.ready.base
  const chats: string[] = new Array(groups)
  return {
    base,
    pid: chat.pid,
    async groups(members: number[]) {
      await registerUsers(base, [PUBLISHER, ...members])
      let next = 0
      async function createLoop() {
        while (next < groups) {
          const index = next++
          const group = members.slice(index * fanout, (index + 1) * fanout).map(String)
          const body = { type: 2, name: `Bench ${index + 1}`, members: group }
          const answer = await call(base, 'POST', '/msg/v1/create_chat', PUBLISHER, body)
          if (answer.status !== 200) throw new Error(`create_chat: ${answer.status} ${answer.error}`)
          chats[index] = String(answer.result.chat.id)
        }
      }
      await Promise.all(Array.from({ length: 16 }, createLoop))
    },
    async send(index: number) {
      const body = { chat_id: chats[index % groups], content: marker() }
      const answer = await call(base, 'POST', '/msg/v1/send_message', PUBLISHER, body)
      if (answer.status !== 200) throw new Error(`send_message: ${answer.status} ${answer.error}`)
    },
    stop: () => chat.stop(),
  }
}

async function startGatewayTarget(dir: string): Promise<Target> {
  const chatDb = await provisionDatabase(dialect as 'sqlite' | 'postgres', false, 0)
  const gatewayDb = await provisionDatabase(dialect as 'sqlite' | 'postgres', false, 0)
  const chat = await startChatFeed(chatDb)
  const usersFile = join(dir, 'users.json')
  const events: Record<string, number> = { HeartbeatSeconds: HEARTBEAT_SECONDS }
  if (args['chunk-subjects']) events.ChunkSubjects = Number(args['chunk-subjects'])
  const spec: SseGatewaySpec = {
    db: gatewayDb.url,
    chat: chat.base,
    serviceSecret: SECRET,
    users: subscribers,
    usersFile,
    memoryFile: join(dir, 'memory.json'),
    profile: join(dir, 'gateway.cpuprofile'),
    events,
    workers,
    configFile: join(dir, 'gateway-workers.json'),
  }
  const started = performance.now()
  const gateway = await startNodeServer<SseGatewayReady>(
    join(import.meta.dirname, 'sse-gateway.ts'),
    [],
    JSON.stringify(spec),
    900_000,
    ['--expose-gc'],
  )
  const users = JSON.parse(readFileSync(usersFile, 'utf8')) as { crmId: number; token: string }[]
  console.log(
    `gateway: ${number(users.length)} users and sessions in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  )
  await chat.groups(users.map((user) => user.crmId))
  const cookie = (token: string) => `cookie: ${gateway.ready.cookieName}=${token}`
  return {
    name: 'gateway',
    pids: () => treeOf(gateway.pid),
    port: gateway.ready.port,
    streams: users.map((user) => ({ path: '/auth/v1/subscribe', headers: [cookie(user.token)] })),
    send: chat.send,
    modulePid: chat.pid,
    ...(workers === 1 && {
      collectGarbage: () => collectGarbage(gateway.pid, spec.memoryFile),
      toggleProfile: () => process.kill(gateway.pid, 'SIGUSR2'),
      profilePath: spec.profile,
    }),
    async stop() {
      await gateway.stop()
      await chat.stop()
      await chatDb.remove()
      await gatewayDb.remove()
    },
  }
}

/** The bare node:http floor that long-polls the chat module as the gateway does (bench/sse-node-poll.ts). */
async function startNodePollTarget(dir: string): Promise<Target> {
  const chatDb = await provisionDatabase(dialect as 'sqlite' | 'postgres', false, 0)
  const chat = await startChatFeed(chatDb)
  // CRM ids of the gateway's shape (timeticks); the gateway's users get theirs from its store.
  const first = timetickAt(Date.now())
  const members = Array.from({ length: subscribers }, (_, index) => first + index)
  await chat.groups(members)
  const memoryFile = join(dir, 'node-poll-memory.json')
  const server = await startNodeServer<{ port: number }>(
    join(import.meta.dirname, 'sse-node-poll.ts'),
    [chat.base, SECRET, String(HEARTBEAT_SECONDS), args['chunk-subjects'] || '200', memoryFile],
    '',
    10_000,
    ['--expose-gc'],
  )
  return {
    name: 'node-poll',
    pids: () => [server.pid],
    port: server.ready.port,
    streams: members.map((member) => ({ path: `/sub/${member}`, headers: [] })),
    send: chat.send,
    modulePid: chat.pid,
    collectGarbage: () => collectGarbage(server.pid, memoryFile),
    async stop() {
      await server.stop()
      await chat.stop()
      await chatDb.remove()
    },
  }
}

/**
 * The streams and publisher of a server with nchan's protocol: each group of --fanout subscribers
 * opens `GET /sub/<channel>` of its group, and an event is POSTed to `/pub/<channel>`.
 */
function channelTarget(name: string, port: number): Pick<Target, 'name' | 'port' | 'streams' | 'send'> {
  const channel = (index: number) => `bench${index % groups}`
  return {
    name,
    port,
    streams: Array.from({ length: subscribers }, (_, i) => ({
      path: `/sub/${channel(Math.floor(i / fanout))}`,
      headers: [],
    })),
    async send(index) {
      const response = await fetch(`http://127.0.0.1:${port}/pub/${channel(index)}`, { method: 'POST', body: marker() })
      await response.arrayBuffer()
      if (response.status >= 300) throw new Error(`${name} publish: ${response.status}`)
    },
  }
}

async function startNchanTarget(dir: string): Promise<Target> {
  const port = await freePort()
  const nchan = await startNchan(args['nchan-module'], port, dir, HEARTBEAT_SECONDS)
  return { ...channelTarget('nchan', port), pids: () => [nchan.worker], stop: () => nchan.stop() }
}

/** The bare node:http floor (bench/sse-node.ts), published to like nchan. */
async function startNodeTarget(dir: string, mode: 'response' | 'socket'): Promise<Target> {
  const memoryFile = join(dir, `node-${mode}-memory.json`)
  const server = await startNodeServer<{ port: number }>(
    join(import.meta.dirname, 'sse-node.ts'),
    [mode, String(HEARTBEAT_SECONDS), memoryFile],
    '',
    10_000,
    ['--expose-gc'],
  )
  return {
    ...channelTarget(`node-${mode}`, server.ready.port),
    pids: () => [server.pid],
    collectGarbage: () => collectGarbage(server.pid, memoryFile),
    stop: () => server.stop(),
  }
}

function startTarget(name: string, dir: string): Promise<Target> {
  if (name === 'nchan') return startNchanTarget(dir)
  if (name === 'node-response') return startNodeTarget(dir, 'response')
  if (name === 'node-socket') return startNodeTarget(dir, 'socket')
  if (name === 'node-poll') return startNodePollTarget(dir)
  if (name === 'gateway') return startGatewayTarget(dir)
  throw new Error(`unknown target ${name}: gateway, nchan, node-response, node-socket or node-poll`)
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0)
const targetCpu = (target: Target) => sum(target.pids().map(cpuMicros))

/** The target's RSS (and V8 heap in use, 0 when unknown) after a garbage collection, when it can be asked for one. */
async function settledMemory(target: Target): Promise<{ rss: number; heap: number }> {
  const heap = (await target.collectGarbage?.()) ?? 0
  await sleep(1000)
  return { rss: sum(target.pids().map(rssBytes)), heap }
}

async function measureTarget(target: Target): Promise<void> {
  const clients = startSubscribers(Number(args.clients))
  try {
    const idle = await settledMemory(target)
    const started = performance.now()
    const opened = await clients.connect(target.port, target.streams)
    const connectSeconds = (performance.now() - started) / 1000
    console.log(
      `${target.name}: ${number(opened.connected)} streams open in ${connectSeconds.toFixed(1)} s, ${opened.failed} failed` +
        (opened.firstError ? ` (first: ${opened.firstError.slice(0, 200)})` : ''),
    )
    await sleep(2000)
    const connected = await settledMemory(target)
    const streams = Math.max(1, opened.connected)
    memory.push({
      target: target.name,
      idle: idle.rss,
      connected: connected.rss,
      perConnection: (connected.rss - idle.rss) / streams,
      heapPerConnection: (connected.heap - idle.heap) / streams,
      connectSeconds,
    })
    const idleCpu = targetCpu(target)
    await sleep(IDLE_SECONDS * 1000)
    const idlePerSecond = (targetCpu(target) - idleCpu) / IDLE_SECONDS
    console.log(`${target.name}: idle with every stream open: ${(idlePerSecond / 1e4).toFixed(1)}% of a core`)
    for (const [index, rate] of rates.entries()) {
      const profiling = args.profile && target.toggleProfile && index === rates.length - 1
      const publishing = publish(rate, (warmup + seconds) * 1000, target.send)
      await sleep(warmup * 1000)
      // Events are counted by when they were published (bench/sse-client.ts): those of the window,
      // each once, however late it arrives within the grace period after it.
      clients.mark(epochNow())
      if (profiling) target.toggleProfile!()
      const cpuBefore = targetCpu(target)
      const moduleBefore = target.modulePid ? cpuMicros(target.modulePid) : 0
      const windowStart = performance.now()
      await sleep(seconds * 1000)
      const cpu = targetCpu(target) - cpuBefore
      const windowSeconds = (performance.now() - windowStart) / 1000
      const moduleCpu = target.modulePid ? (cpuMicros(target.modulePid) - moduleBefore) / windowSeconds / 1e4 : 0
      const until = epochNow()
      if (profiling) target.toggleProfile!()
      const published = await publishing
      await sleep(DELIVERY_GRACE_MS)
      const report = await clients.report(until)
      if (published.errors > 0) console.log(`  ${published.errors} publish errors, first: ${published.firstError}`)
      const latencies = report.latencies.sort((a, b) => a - b)
      const received = Math.max(1, report.received)
      const row: Row = {
        target: target.name,
        rate,
        published: published.sent,
        expected: rate * windowSeconds * fanout,
        received: report.received,
        p50: percentile(latencies, 0.5),
        p99: percentile(latencies, 0.99),
        max: latencies.at(-1) ?? 0,
        cpuPercent: cpu / windowSeconds / 1e4,
        cpuPerDelivery: cpu / received,
        marginalPerDelivery: (cpu - idlePerSecond * windowSeconds) / received,
      }
      rows.push(row)
      console.log(
        `  ${rate} ev/s: ${number(row.received / windowSeconds)} deliveries/s (${number(row.expected / windowSeconds)} due), ` +
          `p50 ${row.p50.toFixed(1)} ms, p99 ${row.p99.toFixed(1)} ms, max ${row.max.toFixed(0)} ms; ` +
          `CPU ${row.cpuPercent.toFixed(1)}%, ${row.cpuPerDelivery.toFixed(1)} µs/delivery (${row.marginalPerDelivery.toFixed(1)} above idle)` +
          (target.modulePid ? `; chat module CPU ${moduleCpu.toFixed(0)}%` : '') +
          (report.ended > 0 ? `; ${report.ended} streams ended` : ''),
      )
      await sleep(1000)
    }
    if (args.profile && target.profilePath) {
      await sleep(2000)
      for (const line of summariseProfile(target.profilePath)) console.log(`  ${line}`)
    }
  } finally {
    await clients.close()
  }
}

const dir = mkdtempSync(join(tmpdir(), 'atrium-bench-sse-'))
console.log(
  `sse bench: ${number(subscribers)} subscribers, fan-out ${fanout} (${number(groups)} groups), rates ${rates.join(', ')} ev/s, ` +
    `${seconds} s windows after ${warmup} s warm-up, ${args.clients} client processes, ${dialect}; node ${process.version}, ` +
    `${cpus().length} cores (${cpus()[0]?.model.trim()}), load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
)
try {
  for (const name of args.targets.split(',')) {
    const target = await startTarget(name, dir)
    try {
      await measureTarget(target)
    } finally {
      await target.stop()
    }
    console.log(
      `load average after ${name}: ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
    )
  }
  printTables(rows, memory, fanout)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
