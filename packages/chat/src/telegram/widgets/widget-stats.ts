import { ChatMessFlags, timetickAt } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'
import type { ChatDatabase } from '../../db/schema.ts'
import { isVisible } from '../../db/visibility.ts'
import { createEscalationsRepository } from '../../support/escalations.repository.ts'

const HOUR_MS = 3_600_000
/** Most support chats counted as waiting or escalated; more show as this number with a `+`. */
const WAITING_COUNT_LIMIT = 10_000

interface StatContext {
  db: Kysely<ChatDatabase>
  now: number
  /** Start of the current UTC day, as a timetick. */
  today: number
  escalateAfterMs: number
}

interface Stat {
  description: string
  compute(context: StatContext): Promise<string>
}

async function count(query: Promise<{ n: number | string | bigint } | undefined>): Promise<string> {
  return String(Number((await query)?.n ?? 0))
}

/** Bytes as people read them: `0 B`, `12.3 KB`, `4.5 GB` (powers of 1000). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB']
  let value = bytes
  let unit = 0
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000
    unit++
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`
}

async function waitingChats({ db, now }: StatContext, waitedMs: number): Promise<string> {
  const rows = await createEscalationsRepository(db).waiting(timetickAt(now - waitedMs), WAITING_COUNT_LIMIT)
  return rows.length >= WAITING_COUNT_LIMIT ? `${WAITING_COUNT_LIMIT}+` : String(rows.length)
}

const visibleSince = (db: Kysely<ChatDatabase>, tick: number) =>
  db.selectFrom('chat_mess').where(isVisible()).where('timetick', '>=', tick)

/**
 * The stats catalogue: every value a widget template may name as `{stat_name}`, computed from the
 * chat module's own tables. "Today" is the current UTC day. Templates name stats, never SQL.
 */
export const STATS = {
  messages_last_hour: {
    description: 'Messages posted in the last hour (visible ones: not deleted, not reactions).',
    compute: ({ db, now }) =>
      count(
        visibleSince(db, timetickAt(now - HOUR_MS))
          .select(sql<number>`COUNT(*)`.as('n'))
          .executeTakeFirst(),
      ),
  },
  messages_today: {
    description: 'Messages posted today (UTC).',
    compute: ({ db, today }) => count(visibleSince(db, today).select(sql<number>`COUNT(*)`.as('n')).executeTakeFirst()),
  },
  active_chats_today: {
    description: 'Chats with at least one message today.',
    compute: ({ db, today }) =>
      count(visibleSince(db, today).select(sql<number>`COUNT(DISTINCT chat_id)`.as('n')).executeTakeFirst()),
  },
  new_members_today: {
    description: 'Memberships that began today (people joining or added to chats).',
    compute: ({ db, today }) =>
      count(
        db
          .selectFrom('chat_members')
          .where('joined', '>=', today)
          .select(sql<number>`COUNT(*)`.as('n'))
          .executeTakeFirst(),
      ),
  },
  people: {
    description: 'People the chat module knows (profiles the gateway synced).',
    compute: ({ db }) => count(db.selectFrom('chat_profiles').select(sql<number>`COUNT(*)`.as('n')).executeTakeFirst()),
  },
  telegram_links: {
    description: 'People who linked a Telegram account.',
    compute: ({ db }) =>
      count(db.selectFrom('telegram_links').select(sql<number>`COUNT(*)`.as('n')).executeTakeFirst()),
  },
  calls_today: {
    description: 'Calls started today.',
    compute: ({ db, today }) =>
      count(
        db
          .selectFrom('chat_mess')
          .where('timetick', '>=', today)
          .where(sql<boolean>`(flags & ${sql.lit(ChatMessFlags.Call)}) <> 0`)
          .where(sql<boolean>`(flags & ${sql.lit(ChatMessFlags.Deleted)}) = 0`)
          .select(sql<number>`COUNT(*)`.as('n'))
          .executeTakeFirst(),
      ),
  },
  waiting_support_chats: {
    description: 'Support chats whose customer waits for a team answer.',
    compute: (context) => waitingChats(context, 0),
  },
  open_escalations: {
    description: 'Support chats whose customer has waited longer than Support.EscalateAfterSeconds.',
    compute: (context) => waitingChats(context, context.escalateAfterMs),
  },
  sms_sent_today: {
    description: 'SMS sent today.',
    compute: ({ db, today }) =>
      count(
        db
          .selectFrom('sms_messages')
          .where('timetick', '>=', today)
          .select(sql<number>`COUNT(*)`.as('n'))
          .executeTakeFirst(),
      ),
  },
  failed_deliveries_today: {
    description: 'SMS sent today that the provider reported failed or undelivered.',
    compute: ({ db, today }) =>
      count(
        db
          .selectFrom('sms_messages')
          .where('timetick', '>=', today)
          .where('status', 'in', ['failed', 'undelivered'])
          .select(sql<number>`COUNT(*)`.as('n'))
          .executeTakeFirst(),
      ),
  },
  files_stored: {
    description: 'Files attached to messages that are not deleted.',
    compute: ({ db }) =>
      count(
        db
          .selectFrom('chat_mess')
          .where('file_size', '>', 0)
          .where(sql<boolean>`(flags & ${sql.lit(ChatMessFlags.Deleted)}) = 0`)
          .select(sql<number>`COUNT(*)`.as('n'))
          .executeTakeFirst(),
      ),
  },
  file_storage: {
    description: 'The size of those files, e.g. 12.3 MB (powers of 1000).',
    compute: async ({ db }) => {
      const row = await db
        .selectFrom('chat_mess')
        .where('file_size', '>', 0)
        .where(sql<boolean>`(flags & ${sql.lit(ChatMessFlags.Deleted)}) = 0`)
        .select(sql<number>`COALESCE(SUM(file_size), 0)`.as('n'))
        .executeTakeFirst()
      return formatBytes(Number(row?.n ?? 0))
    },
  },
} satisfies Record<string, Stat>

export type StatName = keyof typeof STATS

export function isStatName(name: string): name is StatName {
  return Object.hasOwn(STATS, name)
}

/** Computes the stats named, each once. */
export function createStatsReader(db: Kysely<ChatDatabase>, escalateAfterSeconds: number) {
  return async function readStats(names: Iterable<StatName>, now: number): Promise<Map<StatName, string>> {
    const day = new Date(now)
    const today = timetickAt(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate()))
    const context: StatContext = { db, now, today, escalateAfterMs: escalateAfterSeconds * 1000 }
    const wanted = [...new Set(names)]
    const values = await Promise.all(wanted.map((name) => (STATS[name] as Stat).compute(context)))
    return new Map(wanted.map((name, index) => [name, values[index]!]))
  }
}

export type StatsReader = ReturnType<typeof createStatsReader>
