/**
 * The figures of the gateway proxy benchmark (bench/proxy.ts): one line per measured run and the
 * Markdown table of medians with the ratios the issue asks for.
 */
import type { WrkResult } from './proxy-wrk.ts'

export interface Run {
  target: string
  wrk: WrkResult
  /** CPU µs per request of the server processes (nginx master + worker, or the gateway). */
  server: number
  /** CPU µs per request of nginx's auth service. */
  auth: number
  /** CPU µs per request of the upstream. */
  upstream: number
  /** Busy share of the server CPU and the load CPU over the run, all processes. */
  serverBusy: number
  loadBusy: number
  /** Busy shares of the server and load CPUs spent by processes other than the benchmark's: interference. */
  serverOther: number
  loadOther: number
}

const percent = (share: number) => `${(share * 100).toFixed(0)}%`

export function describeRun(run: Run): string {
  return (
    `${run.wrk.throughput.toFixed(0).padStart(7)} req/s  p50 ${run.wrk.p50.toFixed(2)} ms  p99 ${run.wrk.p99.toFixed(2)} ms` +
    `  CPU µs/req: server ${run.server.toFixed(1)}, auth ${run.auth.toFixed(1)}, upstream ${run.upstream.toFixed(1)}` +
    `  server CPU ${percent(run.serverBusy)} busy (others ${percent(run.serverOther)}),` +
    ` load CPU ${percent(run.loadBusy)} (others ${percent(run.loadOther)})` +
    (run.wrk.errors ? `  ERRORS ${run.wrk.errors}` : '')
  )
}

export function median(values: number[]): number {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b)
  if (sorted.length === 0) return Number.NaN
  const middle = Math.floor(sorted.length / 2)
  const upper = sorted[middle] ?? Number.NaN
  return sorted.length % 2 ? upper : ((sorted[middle - 1] ?? upper) + upper) / 2
}

interface Row {
  name: string
  throughput: number
  low: number
  high: number
  p50: number
  p99: number
  /** Server plus auth service. */
  cpu: number
  server: number
  auth: number
  upstream: number
  busy: number
  other: number
  loadBusy: number
  loadOther: number
  errors: number
}

function summarise(name: string, runs: Run[]): Row {
  const mine = runs.filter((run) => run.target === name)
  const pick = (value: (run: Run) => number) => median(mine.map(value))
  const throughputs = mine.map((run) => run.wrk.throughput)
  const server = pick((run) => run.server)
  const auth = pick((run) => run.auth)
  return {
    name,
    throughput: pick((run) => run.wrk.throughput),
    low: Math.min(...throughputs),
    high: Math.max(...throughputs),
    p50: pick((run) => run.wrk.p50),
    p99: pick((run) => run.wrk.p99),
    cpu: pick((run) => run.server + run.auth),
    server,
    auth,
    upstream: pick((run) => run.upstream),
    busy: pick((run) => run.serverBusy),
    other: pick((run) => run.serverOther),
    loadBusy: pick((run) => run.loadBusy),
    loadOther: pick((run) => run.loadOther),
    errors: mine.reduce((sum, run) => sum + run.wrk.errors, 0),
  }
}

/** Ratios printed under the table: [numerator, denominator, label]. */
const RATIOS = [
  ['gateway', 'node-proxy', 'gateway / the bare node:http proxy floor (target: CPU per request ≤ 1.25×)'],
  ['gateway', 'node-proxy-signed', 'gateway / the floor that also signs the hop and sets the identity headers'],
  ['node-proxy-signed', 'node-proxy', 'the signing floor / the bare floor (what the specified hop costs)'],
  ['gateway', 'nginx-auth', 'gateway / nginx auth_request + proxy_pass'],
  ['gateway', 'nginx', 'gateway / nginx proxy_pass'],
  ['gateway-auth', 'nginx-auth', 'gateway answering itself / nginx auth_request + proxy_pass'],
  ['static-gateway', 'static-node', 'gateway static / the bare node:http static floor (target: throughput ≥ 0.8×)'],
  ['static-gateway', 'static-nginx', 'gateway static / nginx gzip_static'],
] as const

/** The suffix of a target measured on the --baseline checkout's gateway. */
export const BASELINE = '@baseline'

/**
 * A ratio within each round (its two runs are minutes apart at most, so drift on a shared
 * machine moves both), as the median and the range over the rounds.
 */
function perRound(runs: Run[], a: string, b: string, value: (run: Run) => number): string {
  const mine = (name: string) => runs.filter((run) => run.target === name)
  const tops = mine(a)
  const bottoms = mine(b)
  const ratios = tops.map((top, round) => value(top) / value(bottoms[round]!))
  const low = Math.min(...ratios)
  const high = Math.max(...ratios)
  return `${median(ratios).toFixed(2)}× (rounds ${low.toFixed(2)}–${high.toFixed(2)})`
}

/** Medians over the rounds of each target, as a Markdown table, then the ratios. */
export function formatRuns(targets: string[], runs: Run[], rounds: number): string {
  const rows = targets.map((name) => summarise(name, runs))
  const lines = [
    `Medians of ${rounds} rounds; CPU is µs per request of the server processes (nginx master + worker, or the gateway), the auth service and the upstream.`,
    '',
    '| target | req/s (median) | req/s (range) | p50 ms | p99 ms | server µs | auth µs | server + auth µs | upstream µs | server CPU busy (others) | load CPU busy (others) | errors |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.name} | ${row.throughput.toFixed(0)} | ${row.low.toFixed(0)}–${row.high.toFixed(0)} | ` +
        `${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${row.server.toFixed(1)} | ${row.auth.toFixed(1)} | ` +
        `${row.cpu.toFixed(1)} | ${row.upstream.toFixed(1)} | ${percent(row.busy)} (${percent(row.other)}) | ` +
        `${percent(row.loadBusy)} (${percent(row.loadOther)}) | ${row.errors} |`,
    ),
    '',
    "Ratios: of the medians, then the median of each round's own ratio.",
  ]
  const names = new Set(targets)
  const pairs: (readonly [string, string, string])[] = [...RATIOS]
  for (const name of targets) {
    if (name.endsWith(BASELINE))
      pairs.push([
        name.slice(0, -BASELINE.length),
        name,
        `${name.slice(0, -BASELINE.length)}: this checkout / the baseline's`,
      ])
  }
  const byName = new Map(rows.map((row) => [row.name, row]))
  for (const [a, b, label] of pairs) {
    const x = byName.get(a)
    const y = byName.get(b)
    if (!x || !y || !names.has(a) || !names.has(b)) continue
    const cpu = (run: Run) => run.server + run.auth
    const throughput = (run: Run) => run.wrk.throughput
    lines.push(
      `- ${label}: throughput ${(x.throughput / y.throughput).toFixed(2)}×, CPU per request ${(x.cpu / y.cpu).toFixed(2)}×;` +
        ` per round: throughput ${perRound(runs, a, b, throughput)}, CPU per request ${perRound(runs, a, b, cpu)}`,
    )
  }
  return lines.join('\n')
}
