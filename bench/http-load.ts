/**
 * HTTP load generator of the chat benchmark, run by bench/chat.ts in a child process so the client
 * and the server do not share one event loop: `node bench/http-load.ts < spec.json` prints a LoadResult.
 * It keeps `connections` request loops busy for `warmupSeconds + seconds`, signing every request as
 * the gateway does, and measures only the requests that start after the warm-up. A request's time
 * runs from sending it to the last byte of its answer, as wrk measures it. A successful answer is
 * counted in bytes and not kept, except one in EVENT_SAMPLE when events are counted, after its time
 * is taken. Decoding, parsing or even joining every 4.7 MB event batch without subjects kept this
 * process at a full core, a third of it collecting garbage, and its work landed inside the timed
 * requests.
 */
import { Agent, request } from 'node:http'
import { signedHeaders } from '@atrium/platform'

/** One request the loops pick at random: a signed call, with X-Crm when `crm` is given. */
export interface RequestTemplate {
  method: 'GET' | 'POST'
  /** Path with query string. */
  path: string
  crm?: number
  /** JSON body of a POST. */
  body?: string
}

export interface LoadSpec {
  base: string
  secret: string
  connections: number
  seconds: number
  warmupSeconds: number
  requests: RequestTemplate[]
  /** Parse each 200 answer as an EventBatch and count its events. */
  countEvents?: boolean
}

export interface LoadResult {
  requests: number
  errors: number
  seconds: number
  /** Requests per second, errors included. */
  throughput: number
  p50: number
  p90: number
  p99: number
  max: number
  /** Mean response size in bytes. */
  bytes: number
  /** Mean events per answer, with countEvents (over the sampled answers). */
  events?: number
  /** This process's CPU time over the whole run (warm-up included), in % of one core. */
  cpu: number
  /** Status and start of the body of the first failed request. */
  firstError?: string
}

interface Answer {
  status: number
  /** Size of the answer's body in bytes. */
  bytes: number
  /** The body, when it was asked for or the answer failed. */
  body?: Buffer
  /** performance.now() when the last byte arrived. */
  received: number
}

function send(agent: Agent, spec: LoadSpec, template: RequestTemplate, keepBody: boolean): Promise<Answer> {
  const headers: Record<string, string> = template.crm === undefined ? {} : { 'X-Crm': String(template.crm) }
  if (template.body !== undefined) {
    headers['content-type'] = 'application/json'
    headers['content-length'] = String(Buffer.byteLength(template.body))
  }
  return new Promise((resolve, reject) => {
    const req = request(
      `${spec.base}${template.path}`,
      { method: template.method, agent, headers: signedHeaders(spec.secret, template.method, template.path, headers) },
      (res) => {
        const status = res.statusCode ?? 0
        const chunks: Buffer[] | undefined = keepBody || status !== 200 ? [] : undefined
        let bytes = 0
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length
          chunks?.push(chunk)
        })
        res.on('end', () => {
          const received = performance.now()
          resolve({ status, bytes, body: chunks && Buffer.concat(chunks), received })
        })
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(template.body)
  })
}

/** The value below which `share` of the sorted durations fall (nearest rank). */
export function percentile(sorted: number[], share: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))]!
}

const EVENT_TYPE_KEY = Buffer.from('"EventType":')
/** With countEvents, one successful answer in this many is kept and its events counted. */
const EVENT_SAMPLE = 16

/**
 * The items of an EventBatch answer: each has one EventType key, and nothing else in the answer can
 * hold those bytes (a quote inside a JSON string is escaped).
 */
function countEvents(body: Buffer): number {
  let count = 0
  for (let at = body.indexOf(EVENT_TYPE_KEY); at !== -1; at = body.indexOf(EVENT_TYPE_KEY, at + 1)) count++
  return count
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: spec.connections })
  const cpuBefore = process.cpuUsage()
  const wallBefore = performance.now()
  const measureFrom = performance.now() + spec.warmupSeconds * 1000
  const end = measureFrom + spec.seconds * 1000
  const durations: number[] = []
  let errors = 0
  let bytes = 0
  let events = 0
  let counted = 0
  let sent = 0
  let firstError: string | undefined

  async function loop(): Promise<void> {
    while (performance.now() < end) {
      const template = spec.requests[Math.floor(Math.random() * spec.requests.length)]!
      const sample = spec.countEvents === true && sent++ % EVENT_SAMPLE === 0
      const started = performance.now()
      let answer: Answer
      try {
        answer = await send(agent, spec, template, sample)
      } catch (error) {
        answer = { status: 0, bytes: 0, body: Buffer.from(String(error)), received: performance.now() }
      }
      const finished = answer.received
      if (started < measureFrom || finished > end) continue
      durations.push(finished - started)
      bytes += answer.bytes
      if (answer.status !== 200) {
        errors++
        const start = answer.body?.subarray(0, 300).toString('utf8')
        firstError ??= `${answer.status} ${template.method} ${template.path.slice(0, 80)}: ${start}`
      } else if (sample && answer.body) {
        events += countEvents(answer.body)
        counted++
      }
    }
  }

  await Promise.all(Array.from({ length: spec.connections }, loop))
  agent.destroy()
  const { user, system } = process.cpuUsage(cpuBefore)
  const cpu = (user + system) / 10 / (performance.now() - wallBefore)
  durations.sort((a, b) => a - b)
  const count = durations.length
  return {
    requests: count,
    errors,
    seconds: spec.seconds,
    throughput: count / spec.seconds,
    p50: percentile(durations, 0.5),
    p90: percentile(durations, 0.9),
    p99: percentile(durations, 0.99),
    max: durations.at(-1) ?? 0,
    bytes: count === 0 ? 0 : bytes / count,
    cpu,
    ...(spec.countEvents ? { events: counted === 0 ? 0 : events / counted } : {}),
    ...(firstError === undefined ? {} : { firstError }),
  }
}

if (import.meta.main) {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  const result = await runLoad(JSON.parse(Buffer.concat(chunks).toString('utf8')) as LoadSpec)
  process.stdout.write(`${JSON.stringify(result)}\n`)
}
