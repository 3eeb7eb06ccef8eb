/**
 * Operator pages benchmark (issue 21: every /ChatAdmin/ page p99 < 50 ms with a million messages):
 *   npm exec -- node bench/chat-admin.ts [--messages 1000000] [--requests 200]
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm exec -- node bench/chat-admin.ts --db postgres
 * Seeds a fresh database with SQL (chats of every kind, members, names, feedback, and messages of
 * which about 12% carry a file, 1% are calls and 2% are soft-deleted, some changed later), then asks
 * each page `--requests` times with varied filters, one request at a time, signed as the gateway
 * signs, and prints p50 and p99 of the time to the whole answer on loopback. The figures are a
 * measurement: the exit code is 0 either way. --keep keeps the database (SQLite file in the temp
 * directory, or PostgreSQL schema) and reuses it next time without seeding again. --detail also
 * prints each page's figures per set of filters given.
 */
import { parseArgs } from 'node:util'
import { ChatMessFlags, ChatType, createDatabase, MemberRole, signedHeaders, timetickAt } from '@atrium/platform'
import { type Insertable, sql } from 'kysely'
import { FILE_EXTENSIONS, FILE_TYPES } from '../packages/chat/src/admin/file-rows.ts'
import type { ChatDatabase } from '../packages/chat/src/db/schema.ts'
import { createTextGenerator, pick, seededRandom, vacuum } from './chat-data.ts'
import { provisionDatabase, SECRET, startServer } from './chat-setup.ts'

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    messages: { type: 'string', default: '1000000' },
    requests: { type: 'string', default: '200' },
    keep: { type: 'boolean', default: false },
    detail: { type: 'boolean', default: false },
  },
})
const dialect = args.db === 'postgres' ? 'postgres' : 'sqlite'
const MESSAGES = Number(args.messages)
const REQUESTS = Number(args.requests)
const USERS = 5_000
const CHATS = 20_000
const SPAN_MS = 90 * 86_400_000
const ROWS_PER_STATEMENT = 1000
const OPERATOR = 1
const random = seededRandom(21)

interface Seeded {
  chats: number[]
  users: number[]
  start: number
}

const EXTENSIONS = Object.values(FILE_EXTENSIONS).flat()
const STEMS = ['report', 'photo', 'IMG_2041', 'invoice', 'scan', 'contract', 'voice', 'clip', 'backup', 'notes']

async function insertMany<T extends keyof ChatDatabase>(
  db: ReturnType<typeof createDatabase<ChatDatabase>>['db'],
  table: T,
  rows: Insertable<ChatDatabase[T]>[],
) {
  for (let index = 0; index < rows.length; index += ROWS_PER_STATEMENT) {
    await db
      .insertInto(table)
      .values(rows.slice(index, index + ROWS_PER_STATEMENT) as never)
      .execute()
  }
}

/** Seeds the database; the chat module must have migrated it. */
async function seed(url: string): Promise<Seeded> {
  const database = createDatabase<ChatDatabase>(url)
  const { db } = database
  const start = Date.now() - SPAN_MS
  const users = Array.from({ length: USERS }, (_, index) => index + 1)
  await insertMany(
    db,
    'chat_profiles',
    users.map((member) => ({ member, name: `Person ${member}`, timetick_update: timetickAt(start) })),
  )
  const chats: number[] = []
  const customers = new Set<number>()
  const chatRows: ChatDatabase['chats'][] = []
  const memberRows: Insertable<ChatDatabase['chat_members']>[] = []
  for (let index = 0; index < CHATS; index++) {
    const timetick = timetickAt(start + Math.floor((index * SPAN_MS) / CHATS)) + 1
    const roll = random()
    const type = roll < 0.6 ? ChatType.Private : roll < 0.95 ? ChatType.Group : ChatType.InfoChannel
    const owner = pick(random, users)
    const others = Array.from({ length: type === ChatType.Private ? 1 : 2 + Math.floor(random() * 10) }, () =>
      pick(random, users),
    ).filter((member) => member !== owner)
    const support = type === ChatType.Group && index % 50 === 0 && !customers.has(owner)
    if (support) customers.add(owner)
    chatRows.push({
      timetick,
      timetick_update: timetick,
      type,
      name: type === ChatType.Private ? '' : `${pick(random, ['Sales', 'Design', 'Ops', 'Support', 'Team'])} ${index}`,
      description: '',
      owner,
      app_id: 0,
      archived: random() < 0.05 ? 1 : 0,
      pair_key: support
        ? `support:${owner}`
        : type === ChatType.Private
          ? `${Math.min(owner, others[0] ?? 0)}:${Math.max(owner, others[0] ?? 0)}:${index}`
          : `#${timetick}`,
      last_message: 0,
    })
    chats.push(timetick)
    for (const member of new Set([owner, ...others]))
      memberRows.push({
        chat_id: timetick,
        member,
        role: member === owner ? MemberRole.Owner : 0,
        last_read: 0,
        joined: timetick,
        timetick_update: timetick,
      })
  }
  await insertMany(db, 'chats', chatRows)
  await insertMany(db, 'chat_members', memberRows)
  const membersOf = new Map<number, number[]>()
  for (const row of memberRows) membersOf.set(row.chat_id, [...(membersOf.get(row.chat_id) ?? []), row.member])

  const text = createTextGenerator(random)
  const started = performance.now()
  let batch: ChatDatabase['chat_mess'][] = []
  for (let index = 0; index < MESSAGES; index++) {
    const at = start + Math.floor((index * SPAN_MS) / MESSAGES)
    const timetick = timetickAt(at) + 2 + (index % 64)
    const chat = pick(random, chats)
    const owner = pick(random, membersOf.get(chat)!)
    const roll = random()
    let flags = 0
    let content = ''
    let file_name = ''
    let file_size = 0
    if (roll < 0.12) {
      flags = ChatMessFlags.File
      file_name = `${pick(random, STEMS)}-${index}.${pick(random, EXTENSIONS)}`
      file_size = Math.floor(Math.exp(7 + random() * 9))
    } else if (roll < 0.13) {
      flags = ChatMessFlags.Call
      const duration = random() < 0.7 ? Math.floor(random() * 900) : 0
      content = JSON.stringify({
        media: random() < 0.3 ? 'video' : 'audio',
        state: 'ended',
        caller: String(owner),
        callee: String(pick(random, users)),
        answered_at: '',
        ended_at: '',
        duration,
        end_reason: duration ? 'completed' : pick(random, ['missed', 'rejected', 'cancelled']),
      })
    } else content = text()
    if (random() < 0.02) flags |= ChatMessFlags.Deleted
    // Some rows changed later (edited, deleted): timetick_update is not always the timetick.
    const changed = random() < 0.05 ? timetickAt(Math.min(Date.now(), at + random() * 5 * 86_400_000)) + 3 : timetick
    batch.push({
      timetick,
      timetick_update: changed,
      chat_id: chat,
      owner,
      content,
      file_id: file_name ? index + 1 : 0,
      file_name,
      file_size,
      file_type: '',
      flags,
      linked_message_id: 0,
      link_kind: 0,
      forwarded_from: 0,
      edited: 0,
    })
    if (batch.length === ROWS_PER_STATEMENT * 5 || index === MESSAGES - 1) {
      await db.transaction().execute(async (trx) => {
        for (let offset = 0; offset < batch.length; offset += ROWS_PER_STATEMENT)
          await trx
            .insertInto('chat_mess')
            .values(batch.slice(offset, offset + ROWS_PER_STATEMENT))
            .execute()
      })
      batch = []
    }
    if ((index + 1) % Math.max(1, Math.floor(MESSAGES / 5)) === 0)
      console.log(
        `  ${(index + 1).toLocaleString('en')} messages in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      )
  }
  await insertMany(
    db,
    'feedback',
    Array.from({ length: 20_000 }, (_, index) => ({
      timetick: timetickAt(start + Math.floor((index * SPAN_MS) / 20_000)) + 5,
      timetick_update: 0,
      owner: pick(random, users),
      object_type: 1 + Math.floor(random() * 6),
      object_id: `object-${index % 500}`,
      object_owner: pick(random, users),
      rating: 1 + Math.floor(random() * 5),
      comment: text(),
      chat_id: 0,
    })),
  )
  if (dialect === 'sqlite') await sql`ANALYZE`.execute(db)
  await database.destroy()
  await vacuum(url)
  return { chats, users, start }
}

/** What a kept database holds, for the page queries. */
async function describe(url: string): Promise<Seeded> {
  const database = createDatabase<ChatDatabase>(url)
  const chats = (await database.db.selectFrom('chats').select('timetick').execute()).map((row) => Number(row.timetick))
  await database.destroy()
  const users = Array.from({ length: USERS }, (_, index) => index + 1)
  return { chats, users, start: Date.now() - SPAN_MS }
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** Each page with a maker of varied query strings. */
function pages({ chats, users, start }: Seeded): [string, () => Record<string, string>][] {
  const someDay = () => day(start + random() * SPAN_MS)
  const tick = () => String(timetickAt(start + random() * SPAN_MS))
  return [
    ['/ChatAdmin', () => ({})],
    [
      '/ChatAdmin/Chats',
      () =>
        pick(random, [
          {},
          { Flags: pick(random, ['private', 'group', 'channel', 'archived']) },
          { Name: pick(random, ['Sales', 'Design 1', 'Ops']) },
          { DateFrom: someDay() },
          { FromTick: tick() },
        ]),
    ],
    ['/ChatAdmin/ChatDetail', () => ({ ChatId: String(pick(random, chats)) })],
    [
      '/ChatAdmin/Messages',
      () =>
        pick(random, [
          {},
          { ChatId: String(pick(random, chats)) },
          { OwnerId: String(pick(random, users)), ShowDeleted: 'true' },
          { FromTick: tick() },
          { DateFrom: someDay() },
        ]),
    ],
    [
      '/ChatAdmin/Members',
      () => pick(random, [{}, { ChatId: String(pick(random, chats)) }, { MemberId: String(pick(random, users)) }]),
    ],
    ['/ChatAdmin/Feedback', () => pick(random, [{}, { Rating: '1' }, { ObjectType: '3' }, { FromTick: tick() }])],
    [
      '/ChatAdmin/UserFiles',
      () =>
        pick(random, [
          {},
          { OwnerId: String(pick(random, users)) },
          { FileType: pick(random, FILE_TYPES) },
          { FileName: pick(random, STEMS) },
          { MinSize: '1000000' },
          { MinSize: '10000', MaxSize: '50000', FileType: 'image' },
          { DateFrom: someDay(), DateTo: someDay() },
          { ShowDeleted: 'true', FromTick: tick() },
          { OwnerId: String(pick(random, users)), FileType: 'doc', ShowDeleted: 'true' },
          // Rare filters: a name a few files have, a size almost none has, a name none has.
          { FileName: `-${Math.floor(random() * 100_000)}.` },
          { MinSize: '8000000' },
          { FileName: 'no-such-file' },
        ]),
    ],
    [
      '/ChatAdmin/FileStatistic',
      () =>
        pick(random, [
          {},
          { FileType: pick(random, FILE_TYPES) },
          { DateFrom: day(start) },
          { ShowDeleted: 'true' },
          { OwnerId: String(pick(random, users)), DateFrom: day(start) },
        ]),
    ],
    ['/ChatAdmin/Calls', () => pick(random, [{}, { ChatId: String(pick(random, chats)) }, { FromTick: tick() }])],
    ['/ChatAdmin/Escalations', () => pick(random, [{}, { Limit: '20', FromTick: tick() }])],
  ]
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!
}

const database = await provisionDatabase(dialect, args.keep, MESSAGES)
try {
  console.log(
    `chat-admin benchmark: ${dialect}, ${MESSAGES.toLocaleString('en')} messages, ${REQUESTS} requests a page`,
  )
  const first = await startServer(database.url)
  await first.close()
  const seeded = database.reused ? await describe(database.url) : await seed(database.url)
  const server = await startServer(database.url)
  try {
    const headers = { 'x-crm': String(OPERATOR), 'x-scopes': 'admin' }
    console.log('page                          p50 ms   p99 ms   max ms')
    for (const [path, query] of pages(seeded)) {
      const times: number[] = []
      const byFilters = new Map<string, number[]>()
      for (let index = 0; index < REQUESTS; index++) {
        const params = query()
        const search = new URLSearchParams(params).toString()
        const url = search ? `${path}?${search}` : path
        const begun = performance.now()
        const response = await fetch(`${server.base}${url}`, {
          headers: signedHeaders(SECRET, 'GET', url, headers),
          redirect: 'manual',
        })
        await response.text()
        times.push(performance.now() - begun)
        const filters = Object.keys(params).join(' ') || '(none)'
        byFilters.set(filters, [...(byFilters.get(filters) ?? []), times.at(-1)!])
        if (response.status !== 200) throw new Error(`${url}: ${response.status}`)
      }
      times.sort((a, b) => a - b)
      console.log(
        `${path.padEnd(28)} ${percentile(times, 50).toFixed(1).padStart(7)} ${percentile(times, 99).toFixed(1).padStart(8)} ${times.at(-1)!.toFixed(1).padStart(8)}`,
      )
      if (args.detail && byFilters.size > 1) {
        for (const [filters, of] of byFilters) {
          of.sort((a, b) => a - b)
          console.log(
            `  ${filters.padEnd(26)} ${percentile(of, 50).toFixed(1).padStart(7)} ${percentile(of, 99).toFixed(1).padStart(8)} ${of.at(-1)!.toFixed(1).padStart(8)}  (${of.length})`,
          )
        }
      }
    }
  } finally {
    await server.close()
  }
} finally {
  await database.remove()
}
