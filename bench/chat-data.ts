/**
 * Background data of the chat benchmark (bench/chat.ts): message text from a small vocabulary with
 * some CJK, the bulk load of chat_mess and matching chat_events rows straight into the database,
 * and what the phases need to know of a loaded database.
 */
import { createDatabase, createTimetickGenerator, timetickAt } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'
import type { ChatDatabase } from '../packages/chat/src/db/schema.ts'
import { indexPendingMessages } from '../packages/chat/src/search/search-index.ts'

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32), so kept databases and runs are alike. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

export function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!
}

/** Words of work chat, most frequent first: the text draws them with Zipf weights. */
export const WORDS = `the to and a we i is it for on this that you in of be will can with please
  team meeting today tomorrow release build deploy review update report client project server database
  issue fix test branch merge ticket design budget invoice contract schedule deadline sprint backlog
  morning afternoon evening monday tuesday wednesday thursday friday weekend office remote call agenda
  draft version feature customer support payment order delivery warehouse shipment supplier price offer
  quarter planning estimate roadmap milestone priority blocker feedback approval signature document folder
  spreadsheet presentation slides screenshot attachment password account access permission login session
  invitation calendar reminder lunch coffee holiday vacation training onboarding hiring interview candidate
  analytics dashboard metrics latency throughput outage incident rollback migration backup restore cluster
  kubernetes docker pipeline staging production sandbox endpoint gateway webhook certificate firewall proxy
  translation localization marketing campaign newsletter banner landing checkout discount coupon refund
  receipt warranty complaint escalation compliance audit policy regulation privacy consent retention
  quickly later soon maybe definitely probably already still again almost exactly urgent important minor
  thanks sorry great perfect awesome done ready blocked waiting confirmed cancelled postponed approved
  привет спасибо встреча завтра отчёт`.split(/\s+/)

/** CJK words (two and three characters); a CJK sentence is several of them without spaces. */
export const CJK_WORDS = [
  '会议',
  '明天',
  '项目',
  '进度',
  '客户',
  '文件',
  '谢谢',
  '问题',
  '测试',
  '上线',
  '负责人',
  '服务器',
  '数据库',
  '周报告',
  '新版本',
  '日程表',
]

/** A message text generator: 3 to 20 words, every 10th message or so with a CJK sentence. */
export function createTextGenerator(random: () => number): () => string {
  const cumulative: number[] = []
  let total = 0
  for (let i = 0; i < WORDS.length; i++) {
    total += 1 / (i + 1)
    cumulative.push(total)
  }
  const word = () => {
    const target = random() * total
    let low = 0
    let high = cumulative.length - 1
    while (low < high) {
      const middle = (low + high) >> 1
      if (cumulative[middle]! < target) low = middle + 1
      else high = middle
    }
    return WORDS[low]!
  }
  return () => {
    const words = Array.from({ length: 3 + Math.floor(random() * 18) }, word)
    words[0] = words[0]!.charAt(0).toUpperCase() + words[0]!.slice(1)
    let text = words.join(' ') + pick(random, ['.', '.', '!', '?', ''])
    if (random() < 0.1)
      text += ` ${Array.from({ length: 2 + Math.floor(random() * 4) }, () => pick(random, CJK_WORDS)).join('')}。`
    return text
  }
}

/** A chat created through the API with its member ids. */
export interface ChatLayout {
  id: number
  members: number[]
}

export interface LoadOptions {
  chats: ChatLayout[]
  /** The big chat gets this share of the messages. */
  bigChat: number
  bigShare: number
  count: number
  random: () => number
  /** Timetick node number of the loader, not the server's. */
  node: number
}

// The background messages are spread over the last 30 days, so they are older than anything sent later.
const SPAN_MS = 30 * 24 * 3600 * 1000
const ROWS_PER_STATEMENT = 1000
const STATEMENTS_PER_TRANSACTION = 5

/**
 * Inserts `count` messages with one NewChatMessage event each (already sequenced), in multi-row
 * INSERTs of 1,000 rows and transactions of 5,000; then sets each chat's newest message and lets
 * every member have joined before the first message, so the events are addressed to them.
 */
export async function bulkLoad(url: string, options: LoadOptions): Promise<void> {
  const { chats, bigChat, bigShare, count, random, node } = options
  const database = createDatabase<ChatDatabase>(url)
  const { db } = database
  const start = Date.now() - SPAN_MS
  let clock = start
  const next = createTimetickGenerator({ node, now: () => clock })
  const text = createTextGenerator(random)
  const big = chats.find((chat) => chat.id === bigChat)!
  const groups = chats.filter((chat) => chat.id !== bigChat)
  const started = performance.now()
  let done = 0
  let reported = 0
  try {
    while (done < count) {
      await db.transaction().execute(async (trx) => {
        for (let s = 0; s < STATEMENTS_PER_TRANSACTION && done < count; s++) {
          const messages: ChatDatabase['chat_mess'][] = []
          const events: ChatDatabase['chat_events'][] = []
          for (let k = 0; k < ROWS_PER_STATEMENT && done < count; k++, done++) {
            clock = start + Math.floor((done * SPAN_MS) / count)
            const chat = random() < bigShare ? big : pick(random, groups)
            const owner = pick(random, chat.members)
            const timetick = next()
            const content = text()
            messages.push({ ...EMPTY_MESSAGE, timetick, timetick_update: timetick, chat_id: chat.id, owner, content })
            const data = {
              message_id: String(timetick),
              chat_id: String(chat.id),
              sender: String(owner),
              content,
              flags: 0,
              link_kind: 'none',
              linked_message_id: '0',
              time: new Date(clock).toISOString(),
            }
            events.push({
              timetick: next(),
              tick_update: next(),
              chat_id: chat.id,
              addressee: 0,
              app_id: 0,
              event_type: 'NewChatMessage',
              data: JSON.stringify(data),
            })
          }
          await trx.insertInto('chat_mess').values(messages).execute()
          await trx.insertInto('chat_events').values(events).execute()
        }
        // As the module's own writes do: the transaction's messages enter the search index together.
        if (database.dialect === 'sqlite') await indexPendingMessages(trx)
      })
      if (done - reported >= count / 10 || done === count) {
        reported = done
        const seconds = (performance.now() - started) / 1000
        console.log(`  loaded ${done.toLocaleString('en')} messages in ${seconds.toFixed(1)} s`)
      }
    }
    await finishLoad(db, timetickAt(start))
  } finally {
    await database.destroy()
  }
  await vacuum(url)
}

/**
 * PostgreSQL: VACUUM ANALYZE of the chat tables, as autovacuum would do shortly after a bulk load or
 * between two runs on a kept schema; the figures should not wait for it (or, on a server with
 * autovacuum off, carry the dead rows of earlier runs: every send rewrites its chat's row).
 */
export async function vacuum(url: string): Promise<void> {
  const database = createDatabase<ChatDatabase>(url)
  try {
    if (database.dialect !== 'postgres') return
    for (const table of ['chat_mess', 'chat_events', 'chat_members', 'chats']) {
      await sql`vacuum analyze ${sql.table(table)}`.execute(database.db)
    }
  } finally {
    await database.destroy()
  }
}

const EMPTY_MESSAGE = {
  file_id: 0,
  file_name: '',
  file_size: 0,
  file_type: '',
  flags: 0,
  linked_message_id: 0,
  link_kind: 0,
  forwarded_from: 0,
  edited: 0,
}

async function finishLoad(db: Kysely<ChatDatabase>, joined: number): Promise<void> {
  await sql`update chats set last_message = (select max(m.timetick) from chat_mess m where m.chat_id = chats.timetick)
    where exists (select 1 from chat_mess m where m.chat_id = chats.timetick)`.execute(db)
  await db.updateTable('chat_members').set({ joined }).execute()
}

/** What the phases need to know of a loaded database. */
export interface DataInfo {
  chats: (ChatLayout & { oldest: number; newest: number; messages: number })[]
  bigChat: number
  messages: number
  events: number
  /** The first event's cursor. */
  firstTick: number
  /** For each asked tail length, the cursor with that many events after it. */
  cursorsBefore: number[]
}

/** Reads what the phases need, through a handle of its own that it closes. */
export async function describeData(url: string, tails: number[]): Promise<DataInfo> {
  const database = createDatabase<ChatDatabase>(url)
  const { db } = database
  try {
    const members = await db.selectFrom('chat_members').select(['chat_id', 'member']).execute()
    const ranges = await db
      .selectFrom('chat_mess')
      .select((eb) => [
        'chat_id',
        eb.fn.min('timetick').as('oldest'),
        eb.fn.max('timetick').as('newest'),
        eb.fn.countAll().as('messages'),
      ])
      .groupBy('chat_id')
      .execute()
    const byChat = new Map<number, number[]>()
    for (const { chat_id, member } of members) byChat.set(chat_id, [...(byChat.get(chat_id) ?? []), member])
    const chats = ranges
      .filter((range) => byChat.has(range.chat_id))
      .map((range) => ({
        id: range.chat_id,
        members: byChat.get(range.chat_id)!,
        oldest: Number(range.oldest),
        newest: Number(range.newest),
        messages: Number(range.messages),
      }))
    const bigChat = chats.reduce((a, b) => (b.members.length > a.members.length ? b : a)).id
    const { n: events, first } = await db
      .selectFrom('chat_events')
      .select((eb) => [eb.fn.countAll().as('n'), eb.fn.min('tick_update').as('first')])
      .where('tick_update', '>', 0)
      .executeTakeFirstOrThrow()
    const cursorsBefore: number[] = []
    for (const tail of tails) {
      const row = await db
        .selectFrom('chat_events')
        .select('tick_update')
        .orderBy('tick_update', 'desc')
        .limit(1)
        .offset(Math.min(tail, Number(events) - 1))
        .executeTakeFirst()
      cursorsBefore.push(row?.tick_update ?? 0)
    }
    return {
      chats,
      bigChat,
      messages: chats.reduce((sum, chat) => sum + chat.messages, 0),
      events: Number(events),
      firstTick: Number(first),
      cursorsBefore,
    }
  } finally {
    await database.destroy()
  }
}
