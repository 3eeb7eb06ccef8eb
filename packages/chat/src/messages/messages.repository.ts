import { ChatMessFlags, compiledOnce, LinkKind } from '@atrium/platform'
import { type Kysely, type RawBuilder, type Selectable, type SelectQueryBuilder, sql } from 'kysely'
import type { ChatDatabase, ChatMessTable } from '../db/schema.ts'
import { isLiveReaction, isVisible } from '../db/visibility.ts'

export type MessageRow = Selectable<ChatMessTable>

type ChatMessQuery = SelectQueryBuilder<ChatDatabase, 'chat_mess', object>

/** Every column of a message, in a Record so that a new one cannot be left out of the insert. */
const MESSAGE_COLUMNS = Object.keys({
  timetick: 0,
  timetick_update: 0,
  chat_id: 0,
  owner: 0,
  content: 0,
  file_id: 0,
  file_name: 0,
  file_size: 0,
  file_type: 0,
  flags: 0,
  linked_message_id: 0,
  link_kind: 0,
  forwarded_from: 0,
  edited: 0,
} satisfies Record<keyof MessageRow, 0>) as (keyof MessageRow)[]

// Runs on every send (compiled-once.ts).
const insertMessage = compiledOnce(MESSAGE_COLUMNS, (db: Kysely<ChatDatabase>, row: MessageRow) =>
  db.insertInto('chat_mess').values(row),
)

/** Aggregated reactions of one message: one entry per emoji. */
export interface ReactionSummary {
  message_id: number
  emoji: string
  count: number
  /** 1 when the asking member is among those who reacted. */
  mine: number
}

export interface PageOptions {
  /** Messages older than this id, newest first. */
  before?: number
  /** Messages newer than this id, oldest first. */
  after?: number
  limit: number
}

/** All SQL of the chat_mess table except search. */
export function createMessagesRepository(db: Kysely<ChatDatabase>) {
  const visibleIn = (chatId: number) =>
    db.selectFrom('chat_mess').selectAll().where('chat_id', '=', chatId).where(isVisible())

  const isMember = (chatId: number, member: number) =>
    sql<boolean>`exists (select 1 from chat_members where chat_members.chat_id = ${chatId} and chat_members.member = ${member})`

  /**
   * Queues the files of the messages about to be deleted (file-releases.ts): one row per message,
   * keyed by its id, so that releases never collide; the gateway removes the bytes of a file only
   * once no message names it any more.
   */
  async function releaseFiles(where: RawBuilder<boolean>): Promise<void> {
    await sql`INSERT INTO file_releases (timetick, file_id)
      SELECT timetick, file_id FROM chat_mess WHERE ${where} AND file_id <> 0`.execute(db)
  }

  function pageQuery(chatId: number, member: number, { before, after, limit }: PageOptions) {
    const query = visibleIn(chatId).where(isMember(chatId, member))
    if (after !== undefined) return query.where('timetick', '>', after).orderBy('timetick', 'asc').limit(limit)
    return (before === undefined ? query : query.where('timetick', '<', before))
      .orderBy('timetick', 'desc')
      .limit(limit)
  }

  /** Reactions aggregated per target and emoji, for the targets `filter` selects. */
  async function reactionsWhere(
    member: number,
    filter: (query: ChatMessQuery) => ChatMessQuery,
  ): Promise<ReactionSummary[]> {
    const rows = await filter(db.selectFrom('chat_mess'))
      .select((eb) => [
        'linked_message_id as message_id',
        'content as emoji',
        eb.fn.countAll().as('count'),
        eb.fn.max(sql<number>`case when owner = ${member} then 1 else 0 end`).as('mine'),
      ])
      .where('link_kind', '=', LinkKind.Reaction)
      .where(sql<boolean>`(flags & ${ChatMessFlags.Deleted}) = 0`)
      .groupBy(['linked_message_id', 'content'])
      .orderBy('content')
      .execute()
    return rows.map((row) => ({ ...row, count: Number(row.count), mine: Number(row.mine) }))
  }

  return {
    async insert(row: MessageRow): Promise<void> {
      await insertMessage(db, row)
    },

    async find(messageId: number): Promise<MessageRow | undefined> {
      return db.selectFrom('chat_mess').selectAll().where('timetick', '=', messageId).executeTakeFirst()
    },

    async findMany(messageIds: number[]): Promise<MessageRow[]> {
      if (messageIds.length === 0) return []
      return db.selectFrom('chat_mess').selectAll().where('timetick', 'in', messageIds).execute()
    },

    /**
     * One page of the regular feed, read only when `member` belongs to the chat: a non-member reads
     * no rows (the caller then checks access for the exact error). Ids are unique and ordered, so
     * pages stay stable under concurrent inserts.
     */
    async page(chatId: number, member: number, options: PageOptions): Promise<MessageRow[]> {
      return pageQuery(chatId, member, options).execute()
    },

    /** The reactions of the messages of that page, read beside it rather than after it. */
    async pageReactions(chatId: number, member: number, options: PageOptions): Promise<ReactionSummary[]> {
      const ids = pageQuery(chatId, member, options).clearSelect().select('timetick')
      return reactionsWhere(member, (query) => query.where('linked_message_id', 'in', ids))
    },

    /** Messages of a chat that carry a file, newest first. */
    async files(chatId: number, before: number | undefined, limit: number): Promise<MessageRow[]> {
      let query = visibleIn(chatId).where(sql<boolean>`(flags & ${ChatMessFlags.File}) <> 0`)
      if (before !== undefined) query = query.where('timetick', '<', before)
      return query.orderBy('timetick', 'desc').limit(limit).execute()
    },

    /** Visible messages by others newer than the read marker. */
    async unread(chatId: number, member: number, lastRead: number, limit: number): Promise<MessageRow[]> {
      return visibleIn(chatId)
        .where('timetick', '>', lastRead)
        .where('owner', '<>', member)
        .orderBy('timetick', 'asc')
        .limit(limit)
        .execute()
    },

    /**
     * Exact count of visible messages by others newer than the read marker, computed when asked;
     * with `upTo`, only those up to that message (a chat view's last_message, so that the count
     * and the message it names agree however many are sent between the two reads).
     */
    async unreadCount(
      chatId: number,
      member: number,
      lastRead: number,
      upTo = Number.MAX_SAFE_INTEGER,
    ): Promise<number> {
      const row = await db
        .selectFrom('chat_mess')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('chat_id', '=', chatId)
        .where('timetick', '>', lastRead)
        .where('timetick', '<=', upTo)
        .where('owner', '<>', member)
        .where(isVisible())
        .executeTakeFirstOrThrow()
      return Number(row.n)
    },

    /**
     * The unread count of every chat of `member` in one query (chat list): visible messages by
     * others newer than each membership's read marker, by chat, with the newest of them; chats
     * with none are absent. Each membership reads a range of the partial index chat_mess_visible.
     */
    async unreadCounts(member: number): Promise<Map<number, { unread: number; newest: number }>> {
      const rows = await db
        .selectFrom('chat_members as m')
        .innerJoin('chat_mess', (join) =>
          join.onRef('chat_mess.chat_id', '=', 'm.chat_id').onRef('chat_mess.timetick', '>', 'm.last_read'),
        )
        .select(['m.chat_id', (eb) => eb.fn.countAll().as('n'), (eb) => eb.fn.max('chat_mess.timetick').as('newest')])
        .where('m.member', '=', member)
        .where('chat_mess.owner', '<>', member)
        .where(isVisible())
        .groupBy('m.chat_id')
        .execute()
      return new Map(rows.map((row) => [Number(row.chat_id), { unread: Number(row.n), newest: Number(row.newest) }]))
    },

    /** The newest visible message id of a chat up to `upTo` (inclusive), 0 for none. */
    async newestVisible(chatId: number, upTo: number): Promise<number> {
      const row = await visibleIn(chatId)
        .where('timetick', '<=', upTo)
        .orderBy('timetick', 'desc')
        .limit(1)
        .executeTakeFirst()
      return row?.timetick ?? 0
    },

    async reactions(messageIds: number[], member: number): Promise<ReactionSummary[]> {
      if (messageIds.length === 0) return []
      return reactionsWhere(member, (query) => query.where('linked_message_id', 'in', messageIds))
    },

    async findReaction(messageId: number, owner: number, emoji: string): Promise<MessageRow | undefined> {
      return db
        .selectFrom('chat_mess')
        .selectAll()
        .where('linked_message_id', '=', messageId)
        .where('link_kind', '=', LinkKind.Reaction)
        .where('owner', '=', owner)
        .where('content', '=', emoji)
        .where(sql<boolean>`(flags & ${ChatMessFlags.Deleted}) = 0`)
        .executeTakeFirst()
    },

    /**
     * Inserts a reaction row unless the owner's live reaction with that emoji on that message
     * exists: the unique index chat_mess_one_reaction decides, so of parallel inserts exactly one
     * returns true.
     */
    async insertReaction(row: MessageRow): Promise<boolean> {
      const result = await db
        .insertInto('chat_mess')
        .values(row)
        .onConflict((conflict) =>
          conflict.columns(['linked_message_id', 'owner', 'content']).where(isLiveReaction()).doNothing(),
        )
        .executeTakeFirst()
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1
    },

    /** Soft-deletes a live reaction row; false when it was removed already (by a parallel request). */
    async removeReaction(messageId: number, tick: number): Promise<boolean> {
      const result = await db
        .updateTable('chat_mess')
        .set({ flags: sql<number>`flags | ${ChatMessFlags.Deleted}`, timetick_update: tick })
        .where('timetick', '=', messageId)
        .where(isLiveReaction())
        .executeTakeFirst()
      return Number(result.numUpdatedRows) === 1
    },

    async update(messageId: number, changes: Partial<Omit<MessageRow, 'timetick'>>): Promise<void> {
      await db.updateTable('chat_mess').set(changes).where('timetick', '=', messageId).execute()
    },

    /** Deletes a message row and the reaction rows aggregated under it; its file is released. */
    async delete(messageId: number): Promise<void> {
      await db
        .deleteFrom('chat_mess')
        .where('linked_message_id', '=', messageId)
        .where('link_kind', '=', LinkKind.Reaction)
        .execute()
      await releaseFiles(sql`timetick = ${messageId}`)
      await db.deleteFrom('chat_mess').where('timetick', '=', messageId).execute()
    },

    /** Deletes every message of a chat; their files are released. */
    async deleteChat(chatId: number): Promise<void> {
      await releaseFiles(sql`chat_id = ${chatId}`)
      await db.deleteFrom('chat_mess').where('chat_id', '=', chatId).execute()
    },
  }
}

export type MessagesRepository = ReturnType<typeof createMessagesRepository>
