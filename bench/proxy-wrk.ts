/**
 * The load of the gateway proxy benchmark (bench/proxy.ts): wrk pinned to its own CPU, with a Lua
 * `done` hook that prints the summary and exact latency percentiles as one JSON line.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawnPinned } from './proxy-processes.ts'

const REPORT_SCRIPT = `done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"micros":%d,"bytes":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,' ..
    '"p50":%d,"p90":%d,"p99":%d,"max":%d}\\n',
    summary.requests, summary.duration, summary.bytes, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`

export interface WrkLoad {
  url: string
  headers: Record<string, string>
  connections: number
  threads: number
  seconds: number
  /** taskset CPU list for wrk; empty: unpinned. */
  cpu: string
}

export interface WrkResult {
  requests: number
  seconds: number
  throughput: number
  /** Mean bytes per response, headers included. */
  bytes: number
  /** Answers with status ≥ 400 plus socket errors. */
  errors: number
  /** Latency percentiles in milliseconds. */
  p50: number
  p90: number
  p99: number
  max: number
}

interface WrkReport {
  requests: number
  micros: number
  bytes: number
  status: number
  connect: number
  read: number
  write: number
  timeout: number
  p50: number
  p90: number
  p99: number
  max: number
}

/**
 * Writes the reporting script into `dir` and returns a runner of wrk loads; `track` receives the
 * stop of each running wrk (so an interrupted benchmark can end it) and returns its removal.
 */
export function createWrk(dir: string, track: (stop: () => Promise<void>) => () => void) {
  const script = join(dir, 'report.lua')
  writeFileSync(script, REPORT_SCRIPT)

  return async function runWrk(load: WrkLoad): Promise<WrkResult> {
    const headers = Object.entries(load.headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`])
    const args = ['-c', String(load.connections), '-t', String(load.threads), '-d', `${load.seconds}s`]
    const wrk = spawnPinned(load.cpu, 'wrk', [...args, '--timeout', '5s', '-s', script, ...headers, load.url])
    // wrk prints its own summary first; the JSON line is the last one.
    let output = ''
    wrk.child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8')
    })
    const untrack = track(() => wrk.stop())
    const code = await new Promise<number | null>((resolve) => wrk.child.once('exit', resolve))
    untrack()
    const line = output.trim().split('\n').at(-1) ?? ''
    if (code !== 0 || !line.startsWith('{')) throw new Error(`wrk failed (${code}): ${output}${wrk.stderr()}`)
    const report = JSON.parse(line) as WrkReport
    const seconds = report.micros / 1e6
    return {
      requests: report.requests,
      seconds,
      throughput: report.requests / seconds,
      bytes: report.requests ? report.bytes / report.requests : 0,
      errors: report.status + report.connect + report.read + report.write + report.timeout,
      p50: report.p50 / 1000,
      p90: report.p90 / 1000,
      p99: report.p99 / 1000,
      max: report.max / 1000,
    }
  }
}

export type RunWrk = ReturnType<typeof createWrk>
