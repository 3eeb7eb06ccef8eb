/**
 * What the gateway's own per-request work costs, without the network's noise:
 * `taskset -c 1 node bench/front-door-cost.ts` drives synthetic HTTP/1.1 requests straight into
 * each server's request event, in alternating rounds, for the gateway's static-file and proxied
 * paths and for the bare floors of bench/proxy-servers.ts, and reports the CPU time per request and
 * the per-round ratios. Node's HTTP parser is left out (the same for both); the proxied requests
 * still go to a real upstream over loopback.
 *
 * Each request reads from /dev/zero before it is handed over and its answer is written to
 * /dev/null, so it meets the kernel where a real one does (the socket's read and writev). That
 * matters on machines whose kernel entries flush the TLB (`pti=on` and similar): there, every
 * step the gateway adds costs about twice its time in a tight loop, as over the network
 * (docs/benchmarks.md, "The gateway's steps, one at a time"). With `--syscalls 0` the requests
 * never leave user space. Round-to-round figures move by a few per cent where bench/proxy.ts
 * moves by a quarter: a tool to find and check the gateway's per-request work, not a
 * replacement for the network benchmarks.
 *
 * Options: --requests N per round (default 20,000), --rounds N (default 9, after one to warm up),
 * --only static,proxy, --syscalls 0|1 (default 1), --profile PREFIX writes a V8 CPU profile of each
 * of the gateway's rounds to PREFIX.<case>.<n>.cpuprofile.
 */
import { mkdtempSync, openSync, readSync, rmSync, writeFileSync, writeSync, writevSync } from 'node:fs'
import { createServer, IncomingMessage, type Server, ServerResponse } from 'node:http'
import { Session } from 'node:inspector/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Duplex } from 'node:stream'
import { parseArgs } from 'node:util'
import { RouteFlags } from '@atrium/platform'
import { benchSessionToken, buildBenchGateway, listenOnLoopback } from './bench-gateway.ts'
import { createProxyHandler, createStaticHandler } from './proxy-servers.ts'
import { STATIC_MOUNT, writeStaticPage } from './proxy-targets.ts'

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '9' },
    syscalls: { type: 'string', default: '1' },
    profile: { type: 'string' },
    only: { type: 'string', default: 'static,proxy' },
  },
})
const REQUESTS = Number(values.requests)
const ROUNDS = Number(values.rounds)
const SYSCALLS = values.syscalls !== '0'

const DEVNULL = openSync('/dev/null', 'w')
const ZERO = openSync('/dev/zero', 'r')
const READ_BUFFER = Buffer.alloc(200)

/** A connection that takes every write and answers nothing, like a client that reads fast. */
function discardingSocket(): Duplex {
  const socket = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, done) {
      if (SYSCALLS) writeSync(DEVNULL, chunk)
      done()
    },
    writev(chunks, done) {
      if (SYSCALLS)
        writevSync(
          DEVNULL,
          chunks.map(({ chunk }) => chunk as Buffer),
        )
      done()
    },
  })
  Object.defineProperties(socket, {
    remoteAddress: { value: '127.0.0.1' },
    remotePort: { value: 40_000 },
    localAddress: { value: '127.0.0.1' },
    localPort: { value: 8080 },
    encrypted: { value: false },
  })
  return socket
}

/**
 * Sends one request through `server`'s request event as Node's HTTP server would (the parser's
 * part aside) and resolves once the response finished and closed.
 */
function request(server: Server, socket: Duplex, path: string, headers: Record<string, string>): Promise<number> {
  // The socket's read of the request.
  if (SYSCALLS) readSync(ZERO, READ_BUFFER)
  const incoming = new IncomingMessage(socket as never)
  incoming.method = 'GET'
  incoming.url = path
  incoming.httpVersionMajor = 1
  incoming.httpVersionMinor = 1
  incoming.httpVersion = '1.1'
  incoming.headers = { host: '127.0.0.1:8080', ...headers }
  incoming.rawHeaders = Object.entries(incoming.headers).flat() as string[]
  incoming.complete = true
  incoming.push(null)
  const response = new ServerResponse(incoming)
  response.assignSocket(socket as never)
  return new Promise((resolve) => {
    response.once('finish', () => {
      response.detachSocket(socket as never)
      response.emit('close')
      resolve(response.statusCode)
    })
    server.emit('request', incoming, response)
  })
}

async function round(server: Server, path: string, headers: Record<string, string>): Promise<number> {
  const socket = discardingSocket()
  const start = process.cpuUsage()
  for (let index = 0; index < REQUESTS; index++) {
    const status = await request(server, socket, path, headers)
    if (status !== 200) throw new Error(`${path}: status ${status}`)
  }
  const used = process.cpuUsage(start)
  return (used.user + used.system) / REQUESTS
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'front-door-cost-'))
  const { page, gatewayRoot } = writeStaticPage(dir)
  const upstream = createServer((_request, response) => response.end('{"ok":true}'))
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  const upstreamPort = (upstream.address() as { port: number }).port

  const { app, config } = await buildBenchGateway({
    GatewayDB: `sqlite:${join(dir, 'gateway.db')}`,
    ServiceSecret: 'proxy-bench-service-secret'.padEnd(40, '-'),
    Static: { Apps: { [STATIC_MOUNT]: gatewayRoot } },
  })
  const token = await benchSessionToken(app, 'Bench User', 'cost')
  await app.store.routes.add({
    prefix: '/bench/',
    upstream: `http://127.0.0.1:${upstreamPort}`,
    flags: RouteFlags.RequireSession,
  })
  await listenOnLoopback(app)
  const cookie = { cookie: `${config.Sessions.CookieName}=${token}` }
  const gzip = { 'accept-encoding': 'gzip' }
  const floor = createServer(createStaticHandler(page))
  const proxyFloor = createServer(createProxyHandler(config.Sessions.CookieName, [token], upstreamPort))
  const signedFloor = createServer(createProxyHandler(config.Sessions.CookieName, [token], upstreamPort, true))

  const only = values.only.split(',')
  const cases = [
    { kind: 'static', name: 'gateway static', server: app.server, path: `${STATIC_MOUNT}index.html`, headers: gzip },
    { kind: 'static', name: 'static floor', server: floor, path: `${STATIC_MOUNT}index.html`, headers: gzip },
    { kind: 'proxy', name: 'gateway proxy', server: app.server, path: '/bench/item', headers: cookie },
    { kind: 'proxy', name: 'proxy floor', server: proxyFloor, path: '/bench/item', headers: cookie },
    { kind: 'proxy', name: 'signed proxy floor', server: signedFloor, path: '/bench/item', headers: cookie },
  ].filter(({ kind }) => only.includes(kind))
  const figures = new Map<string, number[]>(cases.map(({ name }) => [name, []]))
  const profiler = values.profile ? new Session() : undefined
  if (profiler) {
    profiler.connect()
    await profiler.post('Profiler.enable')
  }
  for (let index = 0; index <= ROUNDS; index++) {
    for (const one of cases) {
      const profiled = profiler && index > 0 && one.server === app.server
      if (profiled) await profiler.post('Profiler.start')
      const cost = await round(one.server, one.path, one.headers)
      if (profiled) await profiler.post('Profiler.stop').then(({ profile }) => saveProfile(one.name, profile))
      // Round 0 warms up.
      if (index > 0) figures.get(one.name)!.push(cost)
    }
  }
  const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!
  for (const [name, list] of figures) {
    console.log(
      `${name.padEnd(20)} ${median(list).toFixed(2)} µs/request (rounds ${list.map((cost) => cost.toFixed(2)).join(', ')})`,
    )
  }
  for (const [gateway, floorName] of [
    ['gateway static', 'static floor'],
    ['gateway proxy', 'proxy floor'],
    ['gateway proxy', 'signed proxy floor'],
    ['signed proxy floor', 'proxy floor'],
  ] as const) {
    if (!figures.has(gateway) || !figures.has(floorName)) continue
    const ratios = figures.get(gateway)!.map((cost, index) => cost / figures.get(floorName)![index]!)
    console.log(
      `${gateway} ÷ ${floorName}: ${median(ratios).toFixed(2)}× (rounds ${ratios.map((r) => r.toFixed(2)).join(', ')})`,
    )
  }
  await app.close()
  upstream.closeAllConnections()
  upstream.close()
  rmSync(dir, { recursive: true, force: true })
}

let profiled = 0
function saveProfile(name: string, profile: unknown) {
  profiled += 1
  writeFileSync(`${values.profile}.${name.replace(/\W+/g, '-')}.${profiled}.cpuprofile`, JSON.stringify(profile))
}

await main()
