import { timetickTime, writeBool } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { ChatDatabase } from '../db/schema.ts'
import { isMuted } from '../members/personal-role.ts'

/** A new message one person wants to hear about in Telegram. */
export interface Notice {
  tick: number
  chatId: number
  /** The event data of NewChatMessage (messages/message-view.ts). */
  data: string
  member: number
  telegramChatId: number
  /** When the message was sent, epoch ms. */
  sent: number
}

/** The shared cursor and lease of the notification sender (telegram_state). */
export interface NotifyState {
  cursor: number
  holder: string
  leaseUntil: number
}

/** The notification sender's row in telegram_state. */
const STATE = 'notifications'

/** Most NewChatMessage events one read covers. */
const EVENTS_PER_READ = 200

/** The reads behind Telegram chat notifications: the event feed joined with members and links. */
export function createNotificationsRepository(db: Kysely<ChatDatabase>) {
  return {
    /** The highest sequenced event tick (0 for none): notifications start after it. */
    async head(): Promise<number> {
      const row = await db
        .selectFrom('chat_events')
        .select((eb) => eb.fn.max('tick_update').as('head'))
        .executeTakeFirst()
      return Number(row?.head ?? 0)
    },

    /**
     * The notices for NewChatMessage events after `after`, in tick order: one per member of the
     * message's chat, other than its sender, who had joined by then, has not read it yet, has
     * notifications on and had not muted the chat when the message was sent. Returns where the next
     * read starts; events are read in whole, never split.
     */
    async noticesAfter(after: number): Promise<{ notices: Notice[]; upTo: number }> {
      const ticks = await db
        .selectFrom('chat_events')
        .select('tick_update')
        .where('event_type', '=', 'NewChatMessage')
        .where('tick_update', '>', after)
        .orderBy('tick_update')
        .limit(EVENTS_PER_READ)
        .execute()
      if (ticks.length === 0) return { notices: [], upTo: after }
      const upTo = ticks[ticks.length - 1]!.tick_update
      const rows = await db
        .selectFrom('chat_events as e')
        .innerJoin('chat_members as m', (join) =>
          join.onRef('m.chat_id', '=', 'e.chat_id').onRef('m.joined', '<=', 'e.timetick'),
        )
        .innerJoin('telegram_links as l', 'l.member', 'm.member')
        .select([
          'e.tick_update',
          'e.chat_id',
          'e.data',
          'm.member',
          'm.role',
          'm.muted_until',
          'm.last_read',
          'e.timetick',
          'l.telegram_chat_id',
        ])
        .where('e.event_type', '=', 'NewChatMessage')
        .where('e.tick_update', '>', after)
        .where('e.tick_update', '<=', upTo)
        .where('l.notify', '=', writeBool(true))
        .orderBy('e.tick_update')
        .execute()
      const notices = rows
        // Read already, or sent while the member had the chat muted: no notice.
        .filter((row) => row.last_read < row.timetick && !isMuted(row, timetickTime(row.timetick)))
        .map((row) => ({
          tick: row.tick_update,
          chatId: row.chat_id,
          data: row.data,
          member: row.member,
          telegramChatId: row.telegram_chat_id,
          sent: timetickTime(row.timetick),
        }))
      return { notices, upTo }
    },

    /** The shared cursor and lease; undefined before notifications first ran. */
    async state(): Promise<NotifyState | undefined> {
      const row = await db
        .selectFrom('telegram_state')
        .select(['cursor', 'holder', 'lease_until'])
        .where('name', '=', STATE)
        .executeTakeFirst()
      return row && { cursor: Number(row.cursor), holder: row.holder, leaseUntil: Number(row.lease_until) }
    },

    /** Creates the shared row at `cursor` unless another instance did first. */
    async createState(cursor: number): Promise<void> {
      await db
        .insertInto('telegram_state')
        .values({ name: STATE, cursor })
        .onConflict((conflict) => conflict.column('name').doNothing())
        .execute()
    },

    /** Takes (or renews) the lease as it was read in `seen`; false when another instance changed it first. */
    async take(seen: NotifyState, holder: string, until: number): Promise<boolean> {
      const result = await db
        .updateTable('telegram_state')
        .set({ holder, lease_until: until })
        .where('name', '=', STATE)
        .where('holder', '=', seen.holder)
        .where('lease_until', '=', seen.leaseUntil)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) === 1
    },

    /** Moves the cursor and renews the lease while `holder` still holds it; false once another took it. */
    async advance(holder: string, cursor: number, until: number): Promise<boolean> {
      const result = await db
        .updateTable('telegram_state')
        .set({ cursor, lease_until: until })
        .where('name', '=', STATE)
        .where('holder', '=', holder)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) === 1
    },

    /** Gives the lease back with the cursor reached, so another instance takes over at once. */
    async release(holder: string, cursor: number): Promise<void> {
      await db
        .updateTable('telegram_state')
        .set({ cursor, holder: '', lease_until: 0 })
        .where('name', '=', STATE)
        .where('holder', '=', holder)
        .execute()
    },

    /** Names and types of chats, by id. */
    async chats(ids: number[]): Promise<Map<number, { name: string; type: number }>> {
      if (ids.length === 0) return new Map()
      const rows = await db
        .selectFrom('chats')
        .select(['timetick', 'name', 'type'])
        .where('timetick', 'in', ids)
        .execute()
      return new Map(rows.map((row) => [row.timetick, { name: row.name, type: row.type }]))
    },
  }
}

export type NotificationsRepository = ReturnType<typeof createNotificationsRepository>
