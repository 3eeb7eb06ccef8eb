import { ChatMessFlags, ChatType } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'
import { isCallRow } from '../calls/calls.repository.ts'
import type { ChatRow } from '../chats/chats.repository.ts'
import type { ChatDatabase, FeedbackTable } from '../db/schema.ts'
import type { MemberRow } from '../members/members.repository.ts'
import type { MessageRow } from '../messages/messages.repository.ts'

const notDeleted = sql<boolean>`(flags & ${sql.lit(ChatMessFlags.Deleted)}) = 0`

/** The Chats page's Flags filter: a chat type, or archived chats. */
export const CHAT_FLAGS = ['private', 'group', 'channel', 'archived'] as const
export type ChatFlagFilter = (typeof CHAT_FLAGS)[number]

export interface ChatsFilter {
  flag?: ChatFlagFilter
  /** Substring of the name, case-sensitive. */
  name?: string
  /** Tick bounds on the chat's creation (its timetick). */
  createdMin?: number
  createdBelow?: number
  fromTick?: number
  limit: number
}

export interface MessagesFilter {
  chatId?: number
  ownerId?: number
  timetick?: number
  createdMin?: number
  createdBelow?: number
  showDeleted: boolean
  fromTick?: number
  limit: number
}

export interface MembersFilter {
  chatId?: number
  member?: number
  /** Cursor: [chat_id, member] of the last row shown; the next page starts after it. */
  after?: [number, number]
  limit: number
}

export interface FeedbackFilter {
  objectType?: number
  rating?: number
  fromTick?: number
  limit: number
}

export interface CallsFilter {
  chatId?: number
  /** The caller: the call row's owner. */
  ownerId?: number
  fromTick?: number
  limit: number
}

export type FeedbackRow = FeedbackTable

/** The read-only SQL of the operator pages, each list newest first and cut by a cursor, never OFFSET. */
export function createAdminReadsRepository(db: Kysely<ChatDatabase>, dialect: 'sqlite' | 'postgres') {
  const nameContains = (needle: string) =>
    dialect === 'postgres' ? sql<boolean>`strpos(name, ${needle}) > 0` : sql<boolean>`instr(name, ${needle}) > 0`

  return {
    async chats(filter: ChatsFilter): Promise<ChatRow[]> {
      let query = db.selectFrom('chats').selectAll()
      if (filter.flag === 'private') query = query.where('type', '=', ChatType.Private)
      if (filter.flag === 'group') query = query.where('type', '=', ChatType.Group)
      if (filter.flag === 'channel') query = query.where('type', '=', ChatType.InfoChannel)
      if (filter.flag === 'archived') query = query.where(sql<boolean>`archived = 1`)
      if (filter.name) query = query.where(nameContains(filter.name))
      if (filter.createdMin !== undefined) query = query.where('timetick', '>=', filter.createdMin)
      if (filter.createdBelow !== undefined) query = query.where('timetick', '<', filter.createdBelow)
      if (filter.fromTick !== undefined) query = query.where('timetick', '<', filter.fromTick)
      return query.orderBy('timetick', 'desc').limit(filter.limit).execute()
    },

    async messages(filter: MessagesFilter): Promise<MessageRow[]> {
      let query = db.selectFrom('chat_mess').selectAll()
      if (!filter.showDeleted) query = query.where(notDeleted)
      if (filter.chatId !== undefined) query = query.where('chat_id', '=', filter.chatId)
      if (filter.ownerId !== undefined) query = query.where('owner', '=', filter.ownerId)
      if (filter.timetick !== undefined) query = query.where('timetick', '=', filter.timetick)
      if (filter.createdMin !== undefined) query = query.where('timetick', '>=', filter.createdMin)
      if (filter.createdBelow !== undefined) query = query.where('timetick', '<', filter.createdBelow)
      if (filter.fromTick !== undefined) query = query.where('timetick', '<', filter.fromTick)
      return query.orderBy('timetick', 'desc').limit(filter.limit).execute()
    },

    /** Memberships in key order (chat, then member), so the cursor is the last key shown. */
    async members(filter: MembersFilter): Promise<MemberRow[]> {
      let query = db.selectFrom('chat_members').selectAll()
      if (filter.chatId !== undefined) query = query.where('chat_id', '=', filter.chatId)
      if (filter.member !== undefined) query = query.where('member', '=', filter.member)
      if (filter.after) {
        const [chatId, member] = filter.after
        query = query.where((eb) =>
          eb.or([eb('chat_id', '>', chatId), eb.and([eb('chat_id', '=', chatId), eb('member', '>', member)])]),
        )
      }
      // With a member filter the member's index (member, chat_id) gives chat order directly.
      return query.orderBy('chat_id').orderBy('member').limit(filter.limit).execute()
    },

    async feedback(filter: FeedbackFilter): Promise<FeedbackRow[]> {
      let query = db.selectFrom('feedback').selectAll()
      if (filter.objectType !== undefined) query = query.where('object_type', '=', filter.objectType)
      if (filter.rating !== undefined) query = query.where('rating', '=', filter.rating)
      if (filter.fromTick !== undefined) query = query.where('timetick', '<', filter.fromTick)
      return query.orderBy('timetick', 'desc').limit(filter.limit).execute()
    },

    /** Call rows (the Call flag), newest first. */
    async calls(filter: CallsFilter): Promise<MessageRow[]> {
      let query = db.selectFrom('chat_mess').selectAll().where(isCallRow())
      if (filter.chatId !== undefined) query = query.where('chat_id', '=', filter.chatId)
      if (filter.ownerId !== undefined) query = query.where('owner', '=', filter.ownerId)
      if (filter.fromTick !== undefined) query = query.where('timetick', '<', filter.fromTick)
      return query.orderBy('timetick', 'desc').limit(filter.limit).execute()
    },

    /** How many rows of chat_mess were written since `since` (a tick), by kind. */
    async activitySince(since: number): Promise<{ messages: number; files: number; calls: number }> {
      const row = await db
        .selectFrom('chat_mess')
        .select([
          sql<number>`COUNT(*)`.as('messages'),
          sql<number>`SUM(CASE WHEN (flags & ${sql.lit(ChatMessFlags.File)}) <> 0 THEN 1 ELSE 0 END)`.as('files'),
          sql<number>`SUM(CASE WHEN (flags & ${sql.lit(ChatMessFlags.Call)}) <> 0 THEN 1 ELSE 0 END)`.as('calls'),
        ])
        .where('timetick', '>=', since)
        .executeTakeFirstOrThrow()
      return { messages: Number(row.messages), files: Number(row.files ?? 0), calls: Number(row.calls ?? 0) }
    },

    /** Chats by type, and how many are archived. */
    async chatCounts(): Promise<{ type: number; archived: number; count: number }[]> {
      const rows = await db
        .selectFrom('chats')
        .select(['type', 'archived', sql<number>`COUNT(*)`.as('count')])
        .groupBy(['type', 'archived'])
        .execute()
      return rows.map((row) => ({ type: Number(row.type), archived: Number(row.archived), count: Number(row.count) }))
    },
  }
}

export type AdminReadsRepository = ReturnType<typeof createAdminReadsRepository>
