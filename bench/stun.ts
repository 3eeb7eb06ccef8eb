/**
 * STUN benchmark (issue 19): Binding requests per second and latency of the gateway's embedded STUN
 * responder against coturn's STUN (Debian's `turnserver --stun-only`) in the same run, with the
 * runtime's floor beside them.
 *   npm exec -- node bench/stun.ts [--seconds 5] [--warmup 2] [--window 32] [--clients 1]
 *     [--sources 1] [--threads <cores>] [--targets gateway,coturn,node-echo] [--rounds 5]
 * Targets: `gateway` (the whole gateway process, bench/stun-servers.ts, with Stun.Threads =
 * --threads), `coturn` (turnserver on loopback with only STUN: no relay, TLS, DTLS or CLI; with
 * --relay-threads = --threads, its default being one per core), and `node-echo` (bare node:dgram
 * sockets sending back a prepared answer of the same size, one per thread on a reusePort port: what
 * Node costs before any STUN work). --threads 0 puts all three on one thread (coturn's
 * single-threaded mode, the gateway's and the echo's sockets on their main thread). Each of
 * --clients processes (bench/stun-client.ts) keeps --window requests in flight over --sources UDP
 * sockets; the kernel hands each source port to one server thread, so several are needed to load
 * several threads. Latency is per request, send to answer. CPU is the server
 * process's (all threads) from /proc over the measured window. Rounds repeat the targets in turn so
 * that a busy neighbour on a shared machine shows as spread, and the summary takes each target's
 * median over the rounds. The exit code is 0 either way.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { createSocket } from 'node:dgram'
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { percentile } from './http-load.ts'
import { cpuMicros, freePort, startNodeServer } from './sse-processes.ts'
import { bindingRequestPacket } from './stun-client.ts'

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '2' },
    window: { type: 'string', default: '32' },
    clients: { type: 'string', default: '1' },
    sources: { type: 'string', default: '1' },
    threads: { type: 'string', default: String(cpus().length) },
    targets: { type: 'string', default: 'gateway,coturn,node-echo' },
    rounds: { type: 'string', default: '5' },
  },
})
const seconds = Number(args.seconds)
const warmup = Number(args.warmup)
const window = Number(args.window)
const clients = Number(args.clients)
const sources = Number(args.sources)
const threads = Number(args.threads)
const rounds = Number(args.rounds)
const targets = args.targets.split(',')
const TURNSERVER = '/usr/bin/turnserver'

interface Server {
  pid: number
  port: number
  stop(): Promise<void>
}

interface Row {
  target: string
  round: number
  perSecond: number
  lost: number
  p50: number
  p99: number
  cpuPercent: number
  cpuPerAnswer: number
  /** The 1-minute load average when the round ended. */
  load: number
}

/** Waits until a Binding request to the port is answered (coturn gives no ready line). */
async function untilAnswering(port: number) {
  const socket = createSocket('udp4')
  let answered = false
  socket.on('message', () => {
    answered = true
  })
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  for (let i = 0; i < 100 && !answered; i++) {
    socket.send(bindingRequestPacket(i), port, '127.0.0.1')
    await sleep(100)
  }
  socket.close()
  if (!answered) throw new Error(`nothing answers STUN on port ${port}`)
}

async function startCoturn(dir: string): Promise<Server> {
  const port = await freePort()
  const child: ChildProcess = spawn(
    TURNSERVER,
    [
      '-n',
      '--stun-only',
      '--no-cli',
      '--no-tls',
      '--no-dtls',
      '--no-tcp',
      '--listening-ip',
      '127.0.0.1',
      '--listening-port',
      String(port),
      '--pidfile',
      join(dir, 'turnserver.pid'),
      '--log-file',
      'stdout',
      '--simple-log',
      '--relay-threads',
      String(threads),
    ],
    { stdio: 'ignore' },
  )
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  await untilAnswering(port)
  return {
    pid: child.pid!,
    port,
    async stop() {
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
      await exited
      clearTimeout(timer)
    },
  }
}

async function startTarget(target: string, dir: string): Promise<Server> {
  if (target === 'coturn') return startCoturn(dir)
  const script = join(import.meta.dirname, 'stun-servers.ts')
  const modeArgs =
    target === 'gateway'
      ? ['gateway', `sqlite:${join(dir, `gateway-${Date.now()}.db`)}`, String(threads)]
      : ['node-echo', String(threads)]
  if (target !== 'gateway' && target !== 'node-echo') throw new Error(`unknown target ${target}`)
  const server = await startNodeServer<{ port: number }>(script, modeArgs, '', 60_000)
  await untilAnswering(server.ready.port)
  return { pid: server.pid, port: server.ready.port, stop: server.stop }
}

async function measure(target: string, round: number, dir: string): Promise<Row> {
  const server = await startTarget(target, dir)
  try {
    const script = join(import.meta.dirname, 'stun-client.ts')
    const load = Promise.all(
      Array.from({ length: clients }, () =>
        startNodeServer<{ answers: number; lost: number; latencies: number[] }>(
          script,
          [String(server.port), String(window), String(warmup), String(seconds), String(sources)],
          '',
          (warmup + seconds + 30) * 1000,
        ),
      ),
    )
    await sleep(warmup * 1000)
    const cpuBefore = cpuMicros(server.pid)
    await sleep(seconds * 1000)
    const cpuUsed = cpuMicros(server.pid) - cpuBefore
    const results = (await load).map((client) => client.ready)
    const answers = results.reduce((sum, result) => sum + result.answers, 0)
    const latencies = results.flatMap((result) => result.latencies).sort((a, b) => a - b)
    return {
      target,
      round,
      perSecond: answers / seconds,
      lost: results.reduce((sum, result) => sum + result.lost, 0),
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      cpuPercent: (cpuUsed / (seconds * 1e6)) * 100,
      cpuPerAnswer: answers > 0 ? cpuUsed / answers : 0,
      load: loadavg()[0]!,
    }
  } finally {
    await server.stop()
  }
}

const number = (value: number) => Math.round(value).toLocaleString('en')

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'atrium-stun-bench-'))
  console.log(
    `STUN benchmark: ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, load ${loadavg()
      .map((value) => value.toFixed(2))
      .join(
        ' ',
      )}, Node ${process.version}, ${threads} server thread(s) (0: one, on the main thread), ${clients} client(s) × window ${window} over ${sources} source port(s), ${seconds} s after ${warmup} s`,
  )
  const rows: Row[] = []
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const target of targets) {
        const row = await measure(target, round, dir)
        rows.push(row)
        console.error(`${target} round ${round}: ${number(row.perSecond)}/s`)
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const median = (target: string, field: keyof Row) => {
    const values = rows
      .filter((row) => row.target === target)
      .map((row) => Number(row[field]))
      .sort((a, b) => a - b)
    return values.length === 0 ? 0 : values[Math.floor((values.length - 1) / 2)]!
  }
  console.log('\n| server | round | answers/s | lost | p50 µs | p99 µs | CPU % of a core | CPU µs/answer | load |')
  console.log('|---|---|---|---|---|---|---|---|---|')
  for (const row of rows) {
    console.log(
      `| ${row.target} | ${row.round} | ${number(row.perSecond)} | ${row.lost} | ${number(row.p50)} | ${number(row.p99)} | ${row.cpuPercent.toFixed(0)} | ${row.cpuPerAnswer.toFixed(1)} | ${row.load.toFixed(1)} |`,
    )
  }
  // Medians over the rounds: one round disturbed by a neighbour moves them little.
  const coturn = median('coturn', 'perSecond')
  const coturnCpu = median('coturn', 'cpuPerAnswer')
  console.log('\n| server (median of rounds) | answers/s | × coturn | p50 µs | p99 µs | CPU µs/answer | CPU × coturn |')
  console.log('|---|---|---|---|---|---|---|')
  for (const target of targets) {
    const ratio = (value: number, base: number) => (base > 0 ? (value / base).toFixed(2) : '–')
    console.log(
      `| ${target} | ${number(median(target, 'perSecond'))} | ${ratio(median(target, 'perSecond'), coturn)} | ${number(median(target, 'p50'))} | ${number(median(target, 'p99'))} | ${median(target, 'cpuPerAnswer').toFixed(1)} | ${ratio(median(target, 'cpuPerAnswer'), coturnCpu)} |`,
    )
  }
}

await main()
