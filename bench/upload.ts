/**
 * Resumable upload benchmark (issue 15): the gateway's tus uploads (/auth/v1/uploads, a signed-in
 * user, CRC32 checked per chunk) against @tus/server on @tus/file-store, side by side:
 *   npm exec -- node bench/upload.ts [--rounds 3] [--big-mb 100] [--chunk-mb 5] [--small 1000]
 *     [--small-kb 100] [--concurrency 64] [--rss-mb 1024] [--server-cpu 1] [--load-cpu 0] [--keep]
 * Targets: `gateway` (Upload-Checksum on every chunk), `gateway-nocrc` (the same gateway process,
 * no Upload-Checksum) and `tus` (@tus/server; the client sends Upload-Checksum, which it does not
 * support and ignores). Each round, for each target in turn (interleaved, the order rotating):
 * one --big-mb upload in --chunk-mb chunks (MB/s, server CPU ms per MB); --small uploads of
 * --small-kb each (creation + one PATCH), --concurrency at a time (uploads/s, p50/p99 of creation
 * + PATCH); one --rss-mb upload in --chunk-mb chunks while the server's RSS is sampled every 50 ms
 * (before, peak, steady = median of the second half, at the end). Each server is its own process
 * (bench/upload-servers.ts) pinned to --server-cpu; this client pins itself to --load-cpu and
 * sends from buffers made in advance over keep-alive connections. Only loopback traffic; the temp
 * directory is removed at the end (unless --keep). The figures are a measurement: the exit code is
 * 0 whatever they are.
 */
import { execFileSync } from 'node:child_process'
import { randomFillSync } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { crc32 } from 'node:zlib'
import { cpuMicros, firstJsonLine, hasProgram, type Pinned, spawnPinned } from './proxy-processes.ts'
import type { UploadServerReady, UploadServerSpec } from './upload-servers.ts'

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    'big-mb': { type: 'string', default: '100' },
    'chunk-mb': { type: 'string', default: '5' },
    small: { type: 'string', default: '1000' },
    'small-kb': { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '64' },
    'rss-mb': { type: 'string', default: '1024' },
    'server-cpu': { type: 'string', default: '1' },
    'load-cpu': { type: 'string', default: '0' },
    keep: { type: 'boolean', default: false },
  },
})
const MB = 1024 * 1024
const rounds = Number(args.rounds)
const bigBytes = Number(args['big-mb']) * MB
const chunkBytes = Number(args['chunk-mb']) * MB
const smallCount = Number(args.small)
const smallBytes = Number(args['small-kb']) * 1024
const concurrency = Number(args.concurrency)
const rssBytes = Number(args['rss-mb']) * MB
for (const [name, value] of Object.entries({ rounds, bigBytes, chunkBytes, smallCount, smallBytes, concurrency })) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number above 0`)
}
const serverCpu = hasProgram('taskset') ? args['server-cpu'] : ''
if (serverCpu) execFileSync('taskset', ['-cp', args['load-cpu'], String(process.pid)], { stdio: 'ignore' })

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'atrium-bench-upload-'))
const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
/** The bytes sent: every chunk is a prefix of this buffer, filled once, never read from disk. */
const pool = randomFillSync(Buffer.alloc(Math.max(chunkBytes, smallBytes)))

interface Target {
  name: 'gateway' | 'gateway-nocrc' | 'tus'
  server: Pinned
  base: URL
  headers: Record<string, string>
  checksum: boolean
}

interface Answer {
  status: number
  location: string
}

function send(method: string, url: URL, headers: Record<string, string>, body?: Uint8Array): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent }, (res) => {
      res.resume()
      res.once('end', () => resolve({ status: res.statusCode ?? 0, location: String(res.headers.location ?? '') }))
      res.once('error', reject)
    })
    req.once('error', reject)
    req.end(body)
  })
}

function checksumOf(bytes: Uint8Array): string {
  const value = Buffer.alloc(4)
  value.writeUInt32BE(crc32(bytes))
  return `crc32 ${value.toString('base64')}`
}

/** Creates an upload of `length` bytes and sends it in `chunk`-byte PATCHes; returns its URL. */
async function upload(target: Target, length: number, chunk: number, progress?: (offset: number) => void) {
  const created = await send('POST', target.base, { ...target.headers, 'Upload-Length': String(length) })
  if (created.status !== 201) throw new Error(`${target.name}: creation answered ${created.status}`)
  const url = new URL(created.location, target.base)
  for (let offset = 0; offset < length; ) {
    const bytes = pool.subarray(0, Math.min(chunk, length - offset))
    const headers: Record<string, string> = {
      ...target.headers,
      'Content-Type': 'application/offset+octet-stream',
      'Content-Length': String(bytes.length),
      'Upload-Offset': String(offset),
    }
    if (target.checksum) headers['Upload-Checksum'] = checksumOf(bytes)
    const answer = await send('PATCH', url, headers, bytes)
    if (answer.status !== 204) throw new Error(`${target.name}: PATCH at ${offset} answered ${answer.status}`)
    offset += bytes.length
    progress?.(offset)
  }
  return url
}

/** Terminates an upload so the disk does not fill up; outside every timed window. */
async function remove(target: Target, url: URL) {
  const answer = await send('DELETE', url, target.headers)
  if (answer.status !== 204) console.log(`${target.name}: DELETE answered ${answer.status}`)
}

interface Big {
  mbPerSecond: number
  cpuMsPerMb: number
}

async function big(target: Target): Promise<Big> {
  const cpu = cpuMicros([target.server.pid])
  const start = performance.now()
  const url = await upload(target, bigBytes, chunkBytes)
  const seconds = (performance.now() - start) / 1000
  const cpuMs = (cpuMicros([target.server.pid]) - cpu) / 1000
  await remove(target, url)
  return { mbPerSecond: bigBytes / MB / seconds, cpuMsPerMb: cpuMs / (bigBytes / MB) }
}

interface Small {
  perSecond: number
  p50: number
  p99: number
  cpuMsPerUpload: number
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0

async function small(target: Target, count = smallCount): Promise<Small> {
  const latencies: number[] = []
  let next = 0
  const cpu = cpuMicros([target.server.pid])
  const start = performance.now()
  const worker = async () => {
    while (next < count) {
      next++
      const begun = performance.now()
      await upload(target, smallBytes, smallBytes)
      latencies.push(performance.now() - begun)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
  const seconds = (performance.now() - start) / 1000
  const cpuMs = (cpuMicros([target.server.pid]) - cpu) / 1000
  latencies.sort((a, b) => a - b)
  return {
    perSecond: count / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuMsPerUpload: cpuMs / count,
  }
}

interface Rss {
  before: number
  peak: number
  steady: number
  end: number
  mbPerSecond: number
}

/** Resident set size of the process in MB. */
function rssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m)
  return Number(line?.[1] ?? 0) / 1024
}

async function rss(target: Target): Promise<Rss> {
  const { pid } = target.server
  const before = rssOf(pid)
  let offset = 0
  const samples: { offset: number; rss: number }[] = []
  const timer = setInterval(() => samples.push({ offset, rss: rssOf(pid) }), 50)
  const start = performance.now()
  const url = await upload(target, rssBytes, chunkBytes, (reached) => {
    offset = reached
  })
  const seconds = (performance.now() - start) / 1000
  clearInterval(timer)
  const end = rssOf(pid)
  await remove(target, url)
  const secondHalf = samples
    .filter((sample) => sample.offset >= rssBytes / 2)
    .map((sample) => sample.rss)
    .sort((a, b) => a - b)
  return {
    before,
    peak: Math.max(before, end, ...samples.map((sample) => sample.rss)),
    steady: percentile(secondHalf, 0.5),
    end,
    mbPerSecond: rssBytes / MB / seconds,
  }
}

async function startServer(role: 'gateway' | 'tus'): Promise<{ server: Pinned; ready: UploadServerReady }> {
  const spec: UploadServerSpec = { dir: mkdtempSync(join(dir, `${role}-`)) }
  const server = spawnPinned(serverCpu, process.execPath, [here('./upload-servers.ts'), role], JSON.stringify(spec))
  stoppers.push(() => server.stop())
  return { server, ready: await firstJsonLine<UploadServerReady>(server) }
}

const stoppers: (() => Promise<void>)[] = []

const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  )
const fixed = (value: number, digits = 1) => value.toFixed(digits)

async function main() {
  console.log(
    `${cpus().length} CPUs (${cpus()[0]?.model.trim()}); servers on CPU ${serverCpu}, client on ${args['load-cpu']}`,
  )
  console.log(
    `${rounds} interleaved rounds: ${bigBytes / MB} MB in ${chunkBytes / MB} MB chunks; ${smallCount} x ${smallBytes / 1024} KB, ${concurrency} at a time; RSS during ${rssBytes / MB} MB`,
  )
  const gateway = await startServer('gateway')
  const tus = await startServer('tus')
  const tusHeaders = { 'Tus-Resumable': '1.0.0' }
  const gatewayBase = new URL(`http://127.0.0.1:${gateway.ready.port}${gateway.ready.path}`)
  const gatewayHeaders = { ...tusHeaders, Authorization: `Bearer ${gateway.ready.token}` }
  const targets: Target[] = [
    { name: 'gateway', server: gateway.server, base: gatewayBase, headers: gatewayHeaders, checksum: true },
    { name: 'gateway-nocrc', server: gateway.server, base: gatewayBase, headers: gatewayHeaders, checksum: false },
    {
      name: 'tus',
      server: tus.server,
      base: new URL(`http://127.0.0.1:${tus.ready.port}${tus.ready.path}`),
      headers: tusHeaders,
      checksum: true,
    },
  ]
  for (const target of targets) {
    // Warm-up: the JIT, the database and the page cache, not measured.
    await remove(target, await upload(target, bigBytes, chunkBytes))
    await small(target, Math.min(smallCount, 200))
  }
  const results = new Map(
    targets.map((target) => [target.name, { big: [] as Big[], small: [] as Small[], rss: [] as Rss[] }]),
  )
  for (let round = 0; round < rounds; round++) {
    const order = targets.map((_, index) => targets[(index + round) % targets.length] as Target)
    for (const target of order) {
      const result = results.get(target.name)!
      const b = await big(target)
      const s = await small(target)
      const r = await rss(target)
      result.big.push(b)
      result.small.push(s)
      result.rss.push(r)
      console.log(
        `round ${round + 1} ${target.name}: ${fixed(b.mbPerSecond)} MB/s, ${fixed(b.cpuMsPerMb, 2)} CPU ms/MB; ${fixed(s.perSecond)} uploads/s p50 ${fixed(s.p50)} ms p99 ${fixed(s.p99)} ms; RSS ${fixed(r.before)} -> peak ${fixed(r.peak)} steady ${fixed(r.steady)} end ${fixed(r.end)} MB`,
      )
    }
  }
  const rows = targets.map((target) => {
    const result = results.get(target.name)!
    return {
      name: target.name,
      mbPerSecond: median(result.big.map((b) => b.mbPerSecond)),
      cpuMsPerMb: median(result.big.map((b) => b.cpuMsPerMb)),
      perSecond: median(result.small.map((s) => s.perSecond)),
      p50: median(result.small.map((s) => s.p50)),
      p99: median(result.small.map((s) => s.p99)),
      cpuMsPerUpload: median(result.small.map((s) => s.cpuMsPerUpload)),
      rssBefore: median(result.rss.map((r) => r.before)),
      rssPeak: Math.max(...result.rss.map((r) => r.peak)),
      rssSteady: median(result.rss.map((r) => r.steady)),
      rssEnd: median(result.rss.map((r) => r.end)),
      rssMbPerSecond: median(result.rss.map((r) => r.mbPerSecond)),
    }
  })
  console.log(`\nMedians of ${rounds} rounds (RSS peak: the highest of all rounds)\n`)
  console.log(
    `| target | ${bigBytes / MB} MB: MB/s | CPU ms/MB | ${smallBytes / 1024} KB: uploads/s | p50 ms | p99 ms | CPU ms/upload | ${rssBytes / MB} MB: MB/s | RSS before | peak | steady | end (MB) |`,
  )
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|')
  for (const row of rows) {
    console.log(
      `| ${row.name} | ${fixed(row.mbPerSecond)} | ${fixed(row.cpuMsPerMb, 2)} | ${fixed(row.perSecond)} | ${fixed(row.p50)} | ${fixed(row.p99)} | ${fixed(row.cpuMsPerUpload, 2)} | ${fixed(row.rssMbPerSecond)} | ${fixed(row.rssBefore)} | ${fixed(row.rssPeak)} | ${fixed(row.rssSteady)} | ${fixed(row.rssEnd)} |`,
    )
  }
  const tusRow = rows.find((row) => row.name === 'tus')!
  console.log('\nRatios to tus (gateway / @tus/server)\n')
  console.log('| target | MB/s | CPU/MB | uploads/s | p50 | p99 | CPU/upload | RSS peak | RSS steady |')
  console.log('|---|---|---|---|---|---|---|---|---|')
  for (const row of rows.filter((r) => r.name !== 'tus')) {
    const ratio = (key: keyof typeof row) => fixed((row[key] as number) / (tusRow[key] as number), 2)
    console.log(
      `| ${row.name} | ${ratio('mbPerSecond')} | ${ratio('cpuMsPerMb')} | ${ratio('perSecond')} | ${ratio('p50')} | ${ratio('p99')} | ${ratio('cpuMsPerUpload')} | ${ratio('rssPeak')} | ${ratio('rssSteady')} |`,
    )
  }
}

try {
  await main()
} finally {
  agent.destroy()
  await Promise.all(stoppers.map((stop) => stop()))
  if (args.keep) console.log(`kept ${dir}`)
  else rmSync(dir, { recursive: true, force: true })
}
