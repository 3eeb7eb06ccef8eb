/**
 * Gateway proxy and static serving benchmark (issue 4): a session-authenticated GET proxied by the
 * gateway to a trivial upstream, against nginx `proxy_pass` and nginx `auth_request` + `proxy_pass`
 * (the Authelia / oauth2-proxy pattern), all with keep-alive upstreams; and a 20 KB page with gzip
 * from the gateway's static service against nginx `gzip_static`.
 *   npm exec -- node bench/proxy.ts [--seconds 10] [--rounds 3] [--warmup 3] [--connections 32]
 *     [--threads 1] [--targets nginx,nginx-auth,gateway,gateway-auth,node-proxy,node-proxy-signed,static-nginx,static-gateway,static-node]
 *     [--server-cpu 1] [--load-cpu 0] [--upstream-cpu 0] [--max-others 10] [--retries 2] [--quiet-wait 120]
 *     [--profile 10] [--profile-targets gateway,static-gateway] [--baseline <checkout>] [--workers 1] [--keep]
 * Needs nginx (with the auth_request and gzip_static modules) and wrk: on Debian
 * `apt-get install nginx-light wrk`; not part of the tests. Every server runs in its own process so
 * its CPU time can be read from /proc: nginx (one worker, a foreground child with its configuration
 * in a temp directory), the auth service and the upstream (bench/proxy-servers.ts), the gateway
 * (bench/proxy-gateway.ts). The servers are pinned to --server-cpu, wrk and the upstream to
 * --load-cpu, and the targets are measured in interleaved rounds (A, B, C, A, B, C …) so drift
 * affects them alike. Each run waits (up to --quiet-wait s) until no other process uses more than
 * --max-others % of either CPU, and a run during which others took more than that is measured again
 * (up to --retries times). Then the gateway's V8 CPU profile is recorded for --profile seconds under
 * the load of each of --profile-targets and summarised. `--baseline` names another checkout of
 * the project (a `git worktree` of the commit to compare with, its packages installed): its
 * gateway runs beside this one, and each gateway target is also measured on it (`gateway@baseline`,
 * in the same rounds), so a change is measured before and after in one run. `--workers N` runs each
 * gateway as `npm start` does with `Workers` = N (a primary and N workers on one port, all on
 * --server-cpu; their CPU summed; no profile). The figures are a measurement: the exit
 * code is 0 whatever they are.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import type { GatewayReady, GatewaySpec } from './proxy-gateway.ts'
import {
  busyShare,
  cpuJiffies,
  cpuMicros,
  exitedChildrenCpuMicros,
  firstJsonLine,
  hasProgram,
  type Pinned,
  spawnPinned,
  waitForQuiet,
} from './proxy-processes.ts'
import { formatProfile, summariseProfile } from './proxy-profile.ts'
import { BASELINE, describeRun, formatRuns, type Run } from './proxy-report.ts'
import {
  createTarget,
  GATEWAY_TARGETS,
  PROXY_PREFIX,
  STATIC_MOUNT,
  TARGETS,
  type Target,
  type TargetContext,
  type TargetName,
  writeStaticPage,
} from './proxy-targets.ts'
import { createWrk, type RunWrk } from './proxy-wrk.ts'

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    threads: { type: 'string', default: '1' },
    targets: { type: 'string', default: TARGETS.join(',') },
    'server-cpu': { type: 'string', default: '1' },
    'load-cpu': { type: 'string', default: '0' },
    'upstream-cpu': { type: 'string' },
    profile: { type: 'string', default: '10' },
    'profile-targets': { type: 'string', default: 'gateway,static-gateway' },
    'max-others': { type: 'string', default: '10' },
    retries: { type: 'string', default: '2' },
    'quiet-wait': { type: 'string', default: '120' },
    baseline: { type: 'string' },
    keep: { type: 'boolean', default: false },
    workers: { type: 'string', default: '1' },
  },
})
const seconds = Number(args.seconds)
const rounds = Number(args.rounds)
const warmup = Number(args.warmup)
const connections = Number(args.connections)
const threads = Number(args.threads)
const profileSeconds = Number(args.profile)
const maxOthers = Number(args['max-others']) / 100
const retries = Number(args.retries)
const quietWait = Number(args['quiet-wait'])
const profiledTargets = args['profile-targets'].split(',')
const workers = Number(args.workers)
for (const [name, value] of Object.entries({ seconds, connections, threads, workers })) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a whole number above 0`)
}
for (const [name, value] of Object.entries({ rounds, warmup, profileSeconds, retries, quietWait })) {
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number`)
}
const selected = args.targets.split(',').filter(Boolean) as TargetName[]
for (const name of selected) {
  if (!TARGETS.includes(name)) throw new Error(`unknown target ${name}; targets: ${TARGETS.join(', ')}`)
}
// One CPU for the servers compared, one for the load: the upstream runs beside wrk by default, so
// the server CPU holds exactly what is compared (nginx + auth service, or the gateway).
const serverCpu = args['server-cpu']
const loadCpu = args['load-cpu']
const upstreamCpu = args['upstream-cpu'] ?? loadCpu

const missing = ['nginx', 'wrk', 'taskset'].filter((program) => !hasProgram(program))
if (missing.length > 0) {
  console.error(
    `bench/proxy.ts needs ${missing.join(', ')}. On Debian: apt-get install nginx-light wrk (taskset is in util-linux).`,
  )
  process.exit(1)
}

const node = process.execPath
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))

const dir = mkdtempSync(join(tmpdir(), 'atrium-bench-proxy-'))
// nginx workers run as an unprivileged user and read their files under it.
chmodSync(dir, 0o755)
const stoppers: (() => Promise<void>)[] = []
let stopping: Promise<void> | undefined
function stopAll() {
  stopping ??= Promise.allSettled(stoppers.reverse().map((stop) => stop())).then(() => {
    if (!args.keep) rmSync(dir, { recursive: true, force: true })
  })
  return stopping
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    stopAll().then(() => process.exit(130))
  })
}
// Output piped into `head` that has exited: stop the servers rather than leave them running.
process.stdout.on('error', () => {
  stopAll().then(() => process.exit(1))
})

/** Starts a node server pinned to `cpu` and reads the first line it prints. */
async function startNode<T>(cpu: string, argv: string[], input?: string): Promise<{ server: Pinned; ready: T }> {
  const server = spawnPinned(cpu, node, argv, input)
  stoppers.push(() => server.stop())
  return { server, ready: await firstJsonLine<T>(server) }
}

interface Gateway {
  server: Pinned
  ready: GatewayReady
  /** Where the gateway writes its CPU profile on the second SIGUSR2. */
  profile: string
}

async function startGateway(upstreamPort: number, staticRoot: string, checkout?: string): Promise<Gateway> {
  const spec: GatewaySpec = {
    dir: mkdtempSync(join(dir, 'gateway-')),
    upstream: `http://127.0.0.1:${upstreamPort}`,
    prefix: PROXY_PREFIX,
    profile: join(dir, 'written.cpuprofile'),
    staticApps: { [STATIC_MOUNT]: staticRoot },
    workers,
  }
  const script = checkout ? join(checkout, 'bench', 'proxy-gateway.ts') : here('./proxy-gateway.ts')
  const { server, ready } = await startNode<GatewayReady>(serverCpu, [script], JSON.stringify(spec))
  return { server, ready, profile: spec.profile }
}

/** The gateway's port and processes, for the targets. */
const served = (gateway: Gateway) => ({
  port: gateway.ready.port,
  pids: [gateway.server.pid, ...(gateway.ready.pids ?? [])],
})

async function main() {
  console.log(
    `${cpus().length} CPUs (${cpus()[0]?.model.trim()}); servers on CPU ${serverCpu}, wrk on CPU ${loadCpu}, upstream on CPU ${upstreamCpu}`,
  )
  console.log(
    `wrk ${threads} thread(s), ${connections} connections, ${seconds} s per run, ${rounds} interleaved rounds, ${warmup} s warm-up per target` +
      (workers > 1 ? `; gateway Workers=${workers}` : ''),
  )
  const runWrk = createWrk(dir, (stop) => {
    stoppers.push(stop)
    return () => stoppers.splice(stoppers.indexOf(stop), 1)
  })
  const upstream = await startNode<{ port: number }>(upstreamCpu, [here('./proxy-servers.ts'), 'upstream'])
  const { page, nginxRoot, gatewayRoot } = writeStaticPage(dir)
  const gateway = await startGateway(upstream.ready.port, gatewayRoot)
  const { cookieName, token } = gateway.ready

  const baseline = args.baseline ? await startGateway(upstream.ready.port, gatewayRoot, args.baseline) : undefined

  const targets: Target[] = []
  for (const name of selected) {
    const context: TargetContext = {
      dir,
      cpu: serverCpu,
      upstreamPort: upstream.ready.port,
      gateway: served(gateway),
      cookieName,
      token,
      page,
      nginxRoot,
      track: (stop) => stoppers.push(stop),
      async startHelper(role) {
        const argv = [here('./proxy-servers.ts'), role, cookieName, String(upstream.ready.port)]
        const input = role === 'static' ? JSON.stringify(page) : JSON.stringify([token])
        const helper = await startNode<{ port: number }>(serverCpu, argv, input)
        return { pid: helper.server.pid, port: helper.ready.port }
      },
    }
    const measured = [await createTarget(name, context)]
    if (baseline && GATEWAY_TARGETS.includes(name)) {
      const twin = await createTarget(name, { ...context, gateway: served(baseline), token: baseline.ready.token })
      measured.push({ ...twin, name: `${name}${BASELINE}` })
    }
    for (const target of measured) {
      // A target that does not answer as it should would be measured doing something else.
      await target.check()
      targets.push(target)
    }
  }

  const load = (target: Target, runSeconds: number) =>
    runWrk({ url: target.url, headers: target.headers, connections, threads, seconds: runSeconds, cpu: loadCpu })

  if (warmup > 0) {
    for (const target of targets) await load(target, warmup)
  }

  /** One run of wrk against the target, with the CPU time of every process involved. */
  const measure = async (target: Target): Promise<Run> => {
    const groups = [target.server, target.auth, [upstream.server.pid]]
    const before = groups.map(cpuMicros)
    const serverBefore = cpuJiffies(serverCpu)
    const loadBefore = cpuJiffies(loadCpu)
    const wrkBefore = exitedChildrenCpuMicros()
    const started = performance.now()
    const wrk = await load(target, seconds)
    const wallMicros = (performance.now() - started) * 1000
    const wrkCpu = exitedChildrenCpuMicros() - wrkBefore
    const [server = 0, auth = 0, upstreamCpuTime = 0] = groups.map((pids, index) => cpuMicros(pids) - before[index]!)
    const serverBusy = busyShare(serverBefore, cpuJiffies(serverCpu))
    const loadBusy = busyShare(loadBefore, cpuJiffies(loadCpu))
    const onServerCpu = server + auth + (upstreamCpu === serverCpu ? upstreamCpuTime : 0)
    const onLoadCpu = wrkCpu + (upstreamCpu === loadCpu ? upstreamCpuTime : 0)
    const perRequest = (micros: number) => (wrk.requests ? micros / wrk.requests : Number.NaN)
    return {
      target: target.name,
      wrk,
      server: perRequest(server),
      auth: perRequest(auth),
      upstream: perRequest(upstreamCpuTime),
      serverBusy,
      loadBusy,
      serverOther: Math.max(0, serverBusy - onServerCpu / wallMicros),
      loadOther: Math.max(0, loadBusy - onLoadCpu / wallMicros),
    }
  }
  const disturbed = (run: Run) => run.serverOther > maxOthers || run.loadOther > maxOthers
  const quiet = () => waitForQuiet([serverCpu, loadCpu], maxOthers, quietWait)

  const runs: Run[] = []
  for (let round = 1; round <= rounds; round++) {
    for (const target of targets) {
      // Other processes on either CPU (this machine is shared) disturb a run: measure it again.
      await quiet()
      const attempts = [await measure(target)]
      while (attempts.length <= retries && disturbed(attempts.at(-1)!)) {
        console.log(
          `round ${round} ${target.name.padEnd(14)} ${describeRun(attempts.at(-1)!)}: disturbed, measuring again`,
        )
        await quiet()
        attempts.push(await measure(target))
      }
      // The attempt the other processes took least from.
      const others = (run: Run) => run.serverOther + run.loadOther
      const run = attempts.reduce((best, attempt) => (others(attempt) < others(best) ? attempt : best))
      runs.push(run)
      console.log(`round ${round} ${target.name.padEnd(14)} ${describeRun(run)}`)
    }
  }
  // --rounds 0 only profiles.
  if (runs.length > 0) {
    const names = targets.map((target) => target.name)
    console.log(`\n${formatRuns(names, runs, rounds)}`)
  }

  for (const target of targets) {
    if (profileSeconds === 0 || workers > 1 || !profiledTargets.includes(target.name)) continue
    await profileGateway(target, target.name.endsWith(BASELINE) ? baseline! : gateway, runWrk)
  }
}

/** Records the gateway's CPU profile over one more run of `target` and prints where its time goes. */
async function profileGateway(target: Target, gateway: Gateway, runWrk: RunWrk) {
  gateway.server.child.kill('SIGUSR2')
  const load = { url: target.url, headers: target.headers, connections, threads, cpu: loadCpu }
  const wrk = await runWrk({ ...load, seconds: profileSeconds })
  gateway.server.child.kill('SIGUSR2')
  for (let waited = 0; !existsSync(gateway.profile); waited += 100) {
    if (waited > 30_000) throw new Error('the gateway wrote no profile')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const path = join(dir, `${target.name}.cpuprofile`)
  renameSync(gateway.profile, path)
  console.log(
    `\nProfile of ${target.name} under load (${wrk.throughput.toFixed(0)} req/s while profiled, ${profileSeconds} s)${args.keep ? `: ${path}` : ''}`,
  )
  console.log(formatProfile(summariseProfile(JSON.parse(readFileSync(path, 'utf8')))))
}

try {
  await main()
} finally {
  await stopAll()
  if (args.keep) console.log(`kept ${dir}`)
}
