/**
 * Chat module benchmark (issue: with one million messages, send_message ≥ 3,000/s over HTTP, a
 * get_chat_messages page p99 < 5 ms, search_messages p99 < 50 ms, a 500-event batch < 20 ms):
 *   npm exec -- node bench/chat.ts --db sqlite [--messages 1000000] [--seconds 10] [--connections 32] [--keep]
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm exec -- node bench/chat.ts --db postgres
 * The module runs in this process on 127.0.0.1 and the load comes from bench/http-load.ts in a child
 * process. Chats are created through the API, then the messages (one event each) are bulk-loaded
 * with SQL while the server is down. --keep keeps the SQLite file (in the temp directory, named by
 * message count) or the PostgreSQL schema (bench_chat_keep_<count>) and reuses it next time. The figures are a measurement: the exit code is 0 either way.
 */
import { cpus } from 'node:os'
import { parseArgs } from 'node:util'
import {
  bulkLoad,
  CJK_WORDS,
  createTextGenerator,
  type DataInfo,
  describeData,
  pick,
  seededRandom,
  vacuum,
  WORDS,
} from './chat-data.ts'
import { call, createChats, provisionDatabase, runLoad, SECRET, type Server, startServer } from './chat-setup.ts'
import type { LoadResult, RequestTemplate } from './http-load.ts'

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    messages: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    keep: { type: 'boolean', default: false },
    only: { type: 'string', default: '' },
  },
})
// `--only send` (prefixes of phase names, separated by commas without a space after them, so that
// `--only 'events, 3'` names one phase) runs just those phases, e.g. to profile one.
const only = args.only.split(/,(?! )/).filter(Boolean)
const dialect = args.db
if (dialect !== 'sqlite' && dialect !== 'postgres') throw new Error('--db must be sqlite or postgres')
const messages = Number(args.messages)
const seconds = Number(args.seconds)
const connections = Number(args.connections)
for (const [name, value] of Object.entries({ messages, seconds, connections })) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a whole number above 0`)
}

// The data: 2,000 users; 400 group chats of 5 random users; one chat of the first 200 users with 10% of the messages.
const USERS = 2000
const FIRST_USER = 100_001
const GROUPS = 400
const GROUP_SIZE = 5
const BIG_MEMBERS = 200
const BIG_SHARE = 0.1
const LOADER_NODE = 31
// p99 under saturation measures queueing, so latency targets are measured at low concurrency.
const PAGE_LATENCY_CONNECTIONS = Number(process.env.PAGE_CONNS ?? 1)
const SEARCH_CONNECTIONS = 2
const EVENT_LIMIT = 500
// Event cursors have at least this many events after them: without subjects, and with subjects that
// match about a tenth of the events (one of the users is in the big chat).
const TAILS = [EVENT_LIMIT + 100, (EVENT_LIMIT + 100) * 12]
const random = seededRandom(20_261_122)
const users = Array.from({ length: USERS }, (_, i) => FIRST_USER + i)

interface Phase {
  name: string
  connections: number
  result?: LoadResult
  /** This process's (the server's) CPU time during the phase, in % of one core. */
  serverCpu?: number
  skipped?: string
  target: string
  met?: boolean
}

const phases: Phase[] = []
const number = (value: number) => Math.round(value).toLocaleString('en')

async function measure(
  server: Server,
  phase: Omit<Phase, 'result' | 'met'>,
  requests: RequestTemplate[],
  met?: (result: LoadResult) => boolean,
  countEvents = false,
): Promise<void> {
  if (only.length > 0 && !only.some((prefix) => phase.name.startsWith(prefix))) return
  const spec = { base: server.base, secret: SECRET, seconds, warmupSeconds: 1, requests, countEvents }
  const cpuBefore = process.cpuUsage()
  const wallBefore = performance.now()
  const result = await runLoad({ ...spec, connections: phase.connections })
  const { user, system } = process.cpuUsage(cpuBefore)
  const serverCpu = (user + system) / 10 / (performance.now() - wallBefore)
  phases.push({ ...phase, result, serverCpu, ...(met ? { met: result.errors === 0 && met(result) } : {}) })
  const events = result.events === undefined ? '' : `, ${number(result.events)} events/answer`
  console.log(
    `  ${phase.name} @${phase.connections}: ${number(result.requests)} requests, ${result.errors} errors, ` +
      `${number(result.throughput)}/s, p99 ${result.p99.toFixed(1)} ms, ${number(result.bytes)} B/answer${events}; ` +
      `CPU: server ${number(serverCpu)}%, load generator ${number(result.cpu)}%`,
  )
  if (result.firstError) console.log(`    first error: ${result.firstError}`)
}

function query(path: string, params: Record<string, string | number>): string {
  const entries = Object.entries(params).map(([key, value]): [string, string] => [key, String(value)])
  return `${path}?${new URLSearchParams(entries)}`
}

async function loadData(url: string): Promise<{ data: DataInfo; loadSeconds: number }> {
  // Chats through the API; that server is closed before loading, so SQLite has one handle at a time.
  const setup = await startServer(url)
  const started = performance.now()
  const plan = { users, groups: GROUPS, groupSize: GROUP_SIZE, bigMembers: BIG_MEMBERS, random }
  const layout = await createChats(setup.base, plan).finally(() => setup.close())
  console.log(
    `created ${layout.chats.length} chats through the API in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  )
  const loadStarted = performance.now()
  await bulkLoad(url, { ...layout, bigShare: BIG_SHARE, count: messages, random, node: LOADER_NODE })
  const loadSeconds = (performance.now() - loadStarted) / 1000
  console.log(`bulk load: ${number(messages)} messages and their events in ${loadSeconds.toFixed(1)} s`)
  return { data: await describeData(url, TAILS), loadSeconds }
}

async function runPhases(server: Server, data: DataInfo): Promise<void> {
  const [eventCursorTop = 0, subjectCursorTop = 0] = data.cursorsBefore
  const text = createTextGenerator(random)
  const times = <T>(n: number, make: () => T) => Array.from({ length: n }, make)
  const big = data.chats.find((chat) => chat.id === data.bigChat)!
  const someChat = () => (random() < BIG_SHARE ? big : pick(random, data.chats))
  const members = [...new Set(data.chats.flatMap((chat) => chat.members))]

  const sends = times(4000, (): RequestTemplate => {
    const chat = someChat()
    const body = JSON.stringify({ chat_id: String(chat.id), content: text() })
    return { method: 'POST', path: '/msg/v1/send_message', crm: pick(random, chat.members), body }
  })
  const send = { name: 'send_message', connections, target: '≥ 3,000/s' }
  await measure(server, send, sends, (r) => r.throughput >= 3000)

  // Half newest pages, half pages before a random point of the chat.
  const pages = times(4000, (): RequestTemplate => {
    const chat = someChat()
    const params: Record<string, number> = { chat_id: chat.id, limit: 50 }
    if (random() < 0.5) params.before = chat.oldest + Math.floor(random() * (chat.newest - chat.oldest))
    return { method: 'GET', path: query('/msg/v1/get_chat_messages', params), crm: pick(random, chat.members) }
  })
  const page = { name: 'get_chat_messages', target: 'p99 < 5 ms' }
  await measure(server, { ...page, connections: PAGE_LATENCY_CONNECTIONS }, pages, (r) => r.p99 < 5)
  await measure(server, { ...page, connections, target: '(throughput)' }, pages)

  // Every search is in all of the caller's chats (no chat_id).
  const probe = await call(server.base, 'GET', query('/msg/v1/search_messages', { q: 'probe' }), users[0])
  for (const [name, words] of [
    ['search_messages (words)', WORDS],
    ['search_messages (CJK)', CJK_WORDS],
  ] as const) {
    const search = { name, connections: SEARCH_CONNECTIONS, target: 'p99 < 50 ms' }
    if (probe.status === 404) {
      phases.push({ ...search, skipped: 'skipped: search_messages not available' })
      continue
    }
    const searches = times(2000, (): RequestTemplate => {
      const path = query('/msg/v1/search_messages', { q: pick(random, words), limit: 20 })
      return { method: 'GET', path, crm: pick(random, members) }
    })
    await measure(server, search, searches, (r) => r.p99 < 50)
  }

  // Cursors anywhere from the first event to one with enough events after it.
  const cursor = (top: number) => data.firstTick + Math.floor(random() * Math.max(1, top - data.firstTick))
  const everyone = times(500, (): RequestTemplate => {
    const since = cursor(eventCursorTop)
    return { method: 'GET', path: query('/private/v1/events', { since, limit: EVENT_LIMIT }) }
  })
  const events = { connections: 1, target: 'p99 < 20 ms' }
  await measure(server, { ...events, name: 'events, no subjects' }, everyone, (r) => r.p99 < 20, true)
  const fewUsers = times(500, (): RequestTemplate => {
    const subjects = [pick(random, big.members), pick(random, users), pick(random, users)]
    const params = {
      since: cursor(subjectCursorTop),
      limit: EVENT_LIMIT,
      subjects: subjects.map((id) => `user:${id}`).join(','),
    }
    return { method: 'GET', path: query('/private/v1/events', params) }
  })
  await measure(server, { ...events, name: 'events, 3 users' }, fewUsers, (r) => r.p99 < 20, true)
}

function printTable(data: DataInfo, loadSeconds: number | undefined): void {
  const ms = (value: number) => value.toFixed(1)
  const load = loadSeconds === undefined ? 'reused' : `bulk load ${loadSeconds.toFixed(0)} s`
  console.log(
    `\n${dialect}, ${number(data.messages)} messages before the run (${load}), ${cpus().length} cores, node ${process.version}\n`,
  )
  console.log(
    '| phase | conns | requests | errors | req/s | p50 ms | p90 ms | p99 ms | max ms | server CPU | target | met? |',
  )
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|')
  for (const { name, connections: c, result: r, serverCpu, skipped, target, met } of phases) {
    const verdict = met === undefined ? '' : met ? 'yes' : 'NO'
    if (!r) console.log(`| ${name} | ${c} | ${skipped} | | | | | | | | ${target} | |`)
    else
      console.log(
        `| ${name} | ${c} | ${number(r.requests)} | ${r.errors} | ${number(r.throughput)} | ` +
          `${ms(r.p50)} | ${ms(r.p90)} | ${ms(r.p99)} | ${ms(r.max)} | ${number(serverCpu ?? 0)}% | ${target} | ${verdict} |`,
      )
  }
  console.log(
    '\nserver CPU: the chat process over the phase and its warm-up, in % of one core (a database server is not counted).',
  )
  const judged = phases.filter((phase) => phase.met !== undefined)
  const missed = judged.filter((phase) => !phase.met).map((phase) => phase.name)
  const skipped = phases.some((phase) => phase.skipped) ? '; search skipped' : ''
  console.log(
    `\nsummary: ${dialect}, ${judged.length - missed.length} of ${judged.length} targets met` +
      `${missed.length > 0 ? ` (missed: ${missed.join('; ')})` : ''}${skipped}`,
  )
}

const database = await provisionDatabase(dialect, args.keep, messages)
let server: Server | undefined
try {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU'
  console.log(
    `chat bench: ${dialect}, ${number(messages)} messages, ${seconds} s per phase, ${connections} connections; ` +
      `node ${process.version}, ${cpus().length} cores (${cpu})`,
  )
  let data = database.reused ? await describeData(database.url, TAILS) : undefined
  let loadSeconds: number | undefined
  if (data && data.messages < messages) {
    console.log(`the kept file has only ${number(data.messages)} messages: loading anew`)
    await database.reset()
    data = undefined
  }
  if (data) {
    console.log(`reusing ${database.url}`)
    await vacuum(database.url)
  } else ({ data, loadSeconds } = await loadData(database.url))
  const bigMembers = data.chats.find((chat) => chat.id === data!.bigChat)!.members.length
  console.log(
    `data: ${number(data.messages)} messages, ${number(data.events)} events, ${data.chats.length} chats ` +
      `(the big one: ${bigMembers} members, ${BIG_SHARE * 100}% of the messages)`,
  )
  server = await startServer(database.url)
  await runPhases(server, data)
  printTable(data, loadSeconds)
} finally {
  await server?.close()
  await database.remove()
}
