import { compiledOnce } from '@atrium/platform'
import type { Kysely, Selectable } from 'kysely'
import type { ChatRow } from '../chats/chats.repository.ts'
import type { ChatDatabase, ChatMembersTable } from '../db/schema.ts'

export type MemberRow = Selectable<ChatMembersTable>

/** A new membership made at `tick`, with nothing read yet. */
export function newMemberRow(chatId: number, member: number, role: number, tick: number): MemberRow {
  return { chat_id: chatId, member, role, last_read: 0, joined: tick, timetick_update: tick, muted_until: 0 }
}

type MemberKey = { chatId: number; member: number }

// Both run on every send (compiled-once.ts).
const memberWithChat = compiledOnce(['chatId', 'member'], (db: Kysely<ChatDatabase>, key: MemberKey) =>
  db
    .selectFrom('chat_members as m')
    .innerJoin('chats as c', 'c.timetick', 'm.chat_id')
    .selectAll('c')
    .select(['m.role', 'm.last_read', 'm.joined', 'm.timetick_update as member_update', 'm.muted_until'])
    .where('m.chat_id', '=', key.chatId)
    .where('m.member', '=', key.member),
)
const readUpTo = compiledOnce(
  ['chatId', 'member', 'messageId', 'tick'],
  (db: Kysely<ChatDatabase>, read: MemberKey & { messageId: number; tick: number }) =>
    db
      .updateTable('chat_members')
      .set({ last_read: read.messageId, timetick_update: read.tick })
      .where('chat_id', '=', read.chatId)
      .where('member', '=', read.member)
      .where('last_read', '<', read.messageId),
)

/** All SQL of the chat_members table. */
export function createMembersRepository(db: Kysely<ChatDatabase>) {
  return {
    async find(chatId: number, member: number): Promise<MemberRow | undefined> {
      return db
        .selectFrom('chat_members')
        .selectAll()
        .where('chat_id', '=', chatId)
        .where('member', '=', member)
        .executeTakeFirst()
    },

    /**
     * The membership with its chat in one query (an access check on every operation: one round trip
     * instead of two); undefined when either is missing.
     */
    async findWithChat(chatId: number, member: number): Promise<{ chat: ChatRow; membership: MemberRow } | undefined> {
      const [row] = (await memberWithChat(db, { chatId, member })).rows
      if (!row) return undefined
      const { role, last_read, joined, member_update, muted_until, ...chat } = row
      const membership = {
        chat_id: chatId,
        member,
        role,
        last_read,
        joined,
        timetick_update: member_update,
        muted_until,
      }
      return { chat, membership }
    },

    /** Members in member-id order after the cursor (a member id), for paging. */
    async list(chatId: number, after: number, limit: number): Promise<MemberRow[]> {
      return db
        .selectFrom('chat_members')
        .selectAll()
        .where('chat_id', '=', chatId)
        .where('member', '>', after)
        .orderBy('member')
        .limit(limit)
        .execute()
    },

    async count(chatId: number): Promise<number> {
      const row = await db
        .selectFrom('chat_members')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('chat_id', '=', chatId)
        .executeTakeFirstOrThrow()
      return Number(row.n)
    },

    /** Member counts of many chats in one query; chats without members are absent. */
    async countMany(chatIds: number[]): Promise<Map<number, number>> {
      if (chatIds.length === 0) return new Map()
      const rows = await db
        .selectFrom('chat_members')
        .select(['chat_id', (eb) => eb.fn.countAll().as('n')])
        .where('chat_id', 'in', chatIds)
        .groupBy('chat_id')
        .execute()
      return new Map(rows.map((row) => [Number(row.chat_id), Number(row.n)]))
    },

    /** Which of `members` share at least one chat with `member` (who counts as sharing with themself). */
    async sharingAChat(member: number, members: number[]): Promise<Set<number>> {
      const others = members.filter((other) => other !== member)
      const shared = new Set(members.includes(member) ? [member] : [])
      if (others.length === 0) return shared
      const rows = await db
        .selectFrom('chat_members as theirs')
        .innerJoin('chat_members as mine', 'mine.chat_id', 'theirs.chat_id')
        .select('theirs.member')
        .distinct()
        .where('mine.member', '=', member)
        .where('theirs.member', 'in', others)
        .execute()
      for (const row of rows) shared.add(row.member)
      return shared
    },

    async memberships(member: number): Promise<MemberRow[]> {
      return db.selectFrom('chat_members').selectAll().where('member', '=', member).execute()
    },

    /** Adds a member; an existing membership is left as it is (returns false). */
    async add(row: MemberRow): Promise<boolean> {
      const result = await db
        .insertInto('chat_members')
        .values(row)
        .onConflict((conflict) => conflict.columns(['chat_id', 'member']).doNothing())
        .executeTakeFirst()
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1
    },

    async remove(chatId: number, member: number): Promise<boolean> {
      const result = await db
        .deleteFrom('chat_members')
        .where('chat_id', '=', chatId)
        .where('member', '=', member)
        .executeTakeFirst()
      return Number(result.numDeletedRows) === 1
    },

    async removeAll(chatId: number): Promise<MemberRow[]> {
      const members = await db.selectFrom('chat_members').selectAll().where('chat_id', '=', chatId).execute()
      await db.deleteFrom('chat_members').where('chat_id', '=', chatId).execute()
      return members
    },

    /** Sets the role, and with `mutedUntil` when its mute ends (0: no end). */
    async setRole(chatId: number, member: number, role: number, tick: number, mutedUntil?: number): Promise<void> {
      await db
        .updateTable('chat_members')
        .set({ role, timetick_update: tick, ...(mutedUntil === undefined ? {} : { muted_until: mutedUntil }) })
        .where('chat_id', '=', chatId)
        .where('member', '=', member)
        .execute()
    },

    /** Moves the read marker forward only; returns true when it moved (concurrent reads never move it back). */
    async markRead(chatId: number, member: number, messageId: number, tick: number): Promise<boolean> {
      const result = await readUpTo(db, { chatId, member, messageId, tick })
      return Number(result.numAffectedRows) === 1
    },

    /** The oldest admin, else the oldest member other than `except`: who inherits a chat its owner leaves. */
    async successor(chatId: number, except: number, adminFlag: number): Promise<MemberRow | undefined> {
      const candidates = await db
        .selectFrom('chat_members')
        .selectAll()
        .where('chat_id', '=', chatId)
        .where('member', '<>', except)
        .orderBy('joined')
        .execute()
      return candidates.find((row) => (row.role & adminFlag) !== 0) ?? candidates[0]
    },
  }
}

export type MembersRepository = ReturnType<typeof createMembersRepository>
