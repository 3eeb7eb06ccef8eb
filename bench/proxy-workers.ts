/**
 * The gateway with `Workers` processes against nginx `auth_request` + `proxy_pass` with as many
 * worker processes (issue 22: with Workers=2, throughput at least 0.9× nginx with two workers), and
 * against the runtime's floor with as many processes: the bare `node:http` proxy of
 * bench/proxy-servers.ts (cookie check, undici forward, nothing else), one per worker on one port
 * with SO_REUSEPORT as the gateway's workers share theirs:
 *
 *   npm exec -- node bench/proxy-workers.ts [--workers 2] [--seconds 10] [--rounds 3] [--warmup 3]
 *     [--connections 64] [--threads 2]
 *
 * Nothing is pinned: the servers, wrk and the upstream share every CPU, as they would on one
 * machine. The gateway runs as `npm start` runs it (packages/gateway/src/main.ts, a primary and
 * its workers on one port with SO_REUSEPORT) on a SQLite file prepared with a user, a session and
 * the route `/bench/`; nginx asks the auth service of bench/proxy-servers.ts (one Node process, as
 * in bench/proxy.ts). CPU per request counts every process of each side (gateway primary and
 * workers; nginx master and workers plus the auth service; the floor's processes). The targets are
 * measured in interleaved rounds; the exit code says nothing about the figures.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { RouteFlags } from '@atrium/platform'
import { benchSessionToken, buildBenchGateway, startGatewayWorkers } from './bench-gateway.ts'
import { freePort, startNginx } from './proxy-nginx.ts'
import { childrenOf, cpuMicros, firstJsonLine, spawnPinned } from './proxy-processes.ts'
import { median } from './proxy-report.ts'
import { PROXY_PREFIX } from './proxy-targets.ts'
import { createWrk, type WrkResult } from './proxy-wrk.ts'

const { values: args } = parseArgs({
  options: {
    workers: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '64' },
    threads: { type: 'string', default: '2' },
  },
})
const [workers, seconds, rounds, warmup, connections, threads] = [
  args.workers,
  args.seconds,
  args.rounds,
  args.warmup,
  args.connections,
  args.threads,
].map(Number) as [number, number, number, number, number, number]

const node = process.execPath
const here = (file: string) => new URL(file, import.meta.url).pathname
const dir = mkdtempSync(join(tmpdir(), 'atrium-proxy-workers-'))
const stoppers: (() => Promise<void>)[] = []
const SECRET = 'proxy-bench-service-secret'.padEnd(40, '-')

async function startHelper(argv: string[], input?: string) {
  const server = spawnPinned('', node, argv, input)
  stoppers.push(() => server.stop())
  const ready = await firstJsonLine<{ port: number }>(server)
  return { pid: server.pid, port: ready.port }
}

/** Prepares the gateway's database (user, session, route) in-process, then closes it for the real processes. */
async function prepareGateway(upstreamPort: number) {
  const database = `sqlite:${join(dir, 'gateway.db')}`
  const { app, config } = await buildBenchGateway({ GatewayDB: database, ServiceSecret: SECRET })
  const token = await benchSessionToken(app, 'Bench User', 'wrk')
  await app.store.routes.add({
    prefix: PROXY_PREFIX,
    upstream: `http://127.0.0.1:${upstreamPort}`,
    flags: RouteFlags.RequireSession,
  })
  await app.close()
  return { database, token, cookieName: config.Sessions.CookieName }
}

/** Starts packages/gateway/src/main.ts with `Workers` processes and waits until it answers. */
async function startGateway(database: string) {
  const settings = { GatewayDB: database, ServiceSecret: SECRET }
  const options = { workers, port: await freePort(), configFile: join(dir, 'atrium.json') }
  const gateway = await startGatewayWorkers(settings, options)
  stoppers.push(() => gateway.stop())
  return { port: gateway.port, pids: () => [gateway.pid, ...childrenOf(gateway.pid)] }
}

interface Side {
  name: string
  url: string
  pids: () => number[]
}

async function main() {
  console.log(`${cpus().length} CPUs (${cpus()[0]?.model.trim()}); nothing pinned`)
  console.log(
    `Workers=${workers} against nginx worker_processes ${workers}; wrk ${threads} threads, ${connections} connections, ` +
      `${seconds} s per run, ${rounds} interleaved rounds, ${warmup} s warm-up`,
  )
  const upstream = await startHelper([here('./proxy-servers.ts'), 'upstream'])
  const { database, token, cookieName } = await prepareGateway(upstream.port)
  const gateway = await startGateway(database)
  const auth = await startHelper([here('./proxy-servers.ts'), 'auth', cookieName], JSON.stringify([token]))
  const nginx = await startNginx(
    { kind: 'auth', upstream: upstream.port, auth: auth.port },
    join(dir, 'nginx'),
    '',
    workers,
  )
  stoppers.push(() => nginx.stop())
  const floorPort = await freePort()
  const floor: number[] = []
  for (let index = 0; index < workers; index++) {
    const argv = [here('./proxy-servers.ts'), 'proxy', cookieName, String(upstream.port), String(floorPort)]
    floor.push((await startHelper(argv, JSON.stringify([token]))).pid)
  }
  const path = `${PROXY_PREFIX}item`
  const sides: Side[] = [
    { name: `gateway, Workers=${workers}`, url: `http://127.0.0.1:${gateway.port}${path}`, pids: gateway.pids },
    {
      name: `nginx auth_request, ${workers} workers`,
      url: `http://127.0.0.1:${nginx.port}${path}`,
      pids: () => [...nginx.pids(), auth.pid],
    },
    { name: `bare Node floor, ${workers} processes`, url: `http://127.0.0.1:${floorPort}${path}`, pids: () => floor },
  ]
  const headers = { Cookie: `${cookieName}=${token}` }
  for (const side of sides) {
    const answer = await fetch(side.url, { headers })
    if (answer.status !== 200) throw new Error(`${side.name} answered ${answer.status}: ${await answer.text()}`)
  }
  const runWrk = createWrk(dir, (stop) => {
    stoppers.push(stop)
    return () => stoppers.splice(stoppers.indexOf(stop), 1)
  })
  const load = (side: Side, runSeconds: number) =>
    runWrk({ url: side.url, headers, connections, threads, seconds: runSeconds, cpu: '' })
  for (const side of sides) await load(side, warmup)

  const results = new Map<string, { wrk: WrkResult; cpuPerRequest: number }[]>()
  for (let round = 1; round <= rounds; round++) {
    for (const side of sides) {
      const pids = side.pids()
      const before = cpuMicros(pids)
      const wrk = await load(side, seconds)
      const cpuPerRequest = (cpuMicros(pids) - before) / Math.max(1, wrk.requests)
      console.log(
        `round ${round} ${side.name.padEnd(34)} ${Math.round(wrk.throughput)} req/s  p50 ${wrk.p50.toFixed(2)} ms  ` +
          `p99 ${wrk.p99.toFixed(2)} ms  CPU ${cpuPerRequest.toFixed(1)} µs/req  errors ${wrk.errors}`,
      )
      results.set(side.name, [...(results.get(side.name) ?? []), { wrk, cpuPerRequest }])
    }
  }

  console.log(`\n| target | req/s (median of ${rounds}) | range | p99 ms (median) | CPU µs/req (median) |`)
  console.log('|---|---|---|---|---|')
  const medians = sides.map((side) => {
    const runs = results.get(side.name) ?? []
    const throughputs = runs.map((run) => run.wrk.throughput)
    const row = {
      throughput: median(throughputs),
      p99: median(runs.map((run) => run.wrk.p99)),
      cpu: median(runs.map((run) => run.cpuPerRequest)),
    }
    console.log(
      `| ${side.name} | ${Math.round(row.throughput)} | ${Math.round(Math.min(...throughputs))}–${Math.round(Math.max(...throughputs))} | ` +
        `${row.p99.toFixed(2)} | ${row.cpu.toFixed(1)} |`,
    )
    return row
  })
  const [ours, theirs, bare] = medians as [(typeof medians)[0], (typeof medians)[0], (typeof medians)[0]]
  const ratio = (a: typeof ours, b: typeof ours) =>
    `throughput ${(a.throughput / b.throughput).toFixed(2)}×, CPU per request ${(a.cpu / b.cpu).toFixed(2)}×`
  console.log(`\ngateway / nginx: ${ratio(ours, theirs)}`)
  console.log(`gateway / floor: ${ratio(ours, bare)}`)
  console.log(`floor / nginx: ${ratio(bare, theirs)}`)
}

try {
  await main()
} finally {
  for (const stop of stoppers.reverse()) await stop().catch(() => {})
  rmSync(dir, { recursive: true, force: true })
}
