import { ChatMessFlags } from '@atrium/platform'
import { type Kysely, type Selectable, sql } from 'kysely'
import type { CallLinesTable, ChatDatabase } from '../db/schema.ts'
import type { MessageRow } from '../messages/messages.repository.ts'

/** The predicate of call rows, stated once so the partial index chat_mess_calls (migration 0017) serves it. */
export function isCallRow() {
  return sql<boolean>`(flags & ${sql.lit(ChatMessFlags.Call)}) <> 0`
}

export type CallLineRow = Selectable<CallLinesTable>

/** The state of an active call's participant rows (call_lines.state). */
export const CallLineState = { Ringing: 1, Connected: 2 } as const

/** All SQL of the call_lines table, and the reads of call rows in chat_mess. */
export function createCallsRepository(db: Kysely<ChatDatabase>) {
  return {
    /**
     * Claims a line for each participant, in member order so that crossing initiates on PostgreSQL
     * wait for each other instead of deadlocking. Returns the members whose line was free: a member
     * already in a call keeps that call's row, and the database key makes that hold under parallel
     * requests on every instance.
     */
    async claim(lines: CallLineRow[]): Promise<Set<number>> {
      const sorted = [...lines].sort((a, b) => a.member - b.member)
      const rows = await db
        .insertInto('call_lines')
        .values(sorted)
        .onConflict((conflict) => conflict.column('member').doNothing())
        .returning('member')
        .execute()
      return new Set(rows.map((row) => Number(row.member)))
    },

    /** The active line of a member, if any. */
    async line(member: number): Promise<CallLineRow | undefined> {
      return db.selectFrom('call_lines').selectAll().where('member', '=', member).executeTakeFirst()
    },

    /** Both lines of an active call (none once it ended). */
    async lines(callId: number): Promise<CallLineRow[]> {
      return db.selectFrom('call_lines').selectAll().where('call_id', '=', callId).orderBy('member').execute()
    },

    /**
     * Moves a ringing call to connected; false when it was not ringing any more (answered, ended
     * or timed out meanwhile), so only one of two racing operations wins.
     */
    async connect(callId: number, now: number): Promise<boolean> {
      const result = await db
        .updateTable('call_lines')
        .set({ state: CallLineState.Connected, since: now, seen: now, offer: '' })
        .where('call_id', '=', callId)
        .where('state', '=', CallLineState.Ringing)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },

    /** Removes the lines of a call; false when another operation had already ended it. */
    async release(callId: number): Promise<boolean> {
      const result = await db.deleteFrom('call_lines').where('call_id', '=', callId).executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },

    /** Records a participant's sign of life. */
    async touch(member: number, callId: number, now: number): Promise<void> {
      await db
        .updateTable('call_lines')
        .set({ seen: now })
        .where('member', '=', member)
        .where('call_id', '=', callId)
        .execute()
    },

    /**
     * Lines of calls the server ends on its own: ringing since before `ringingBefore` (nobody
     * answered), or a participant silent since before `silentBefore` (a closed tab, a lost
     * network); while a call rings only its caller is expected to keep it alive.
     */
    async overdue(ringingBefore: number, silentBefore: number, limit: number): Promise<CallLineRow[]> {
      return db
        .selectFrom('call_lines')
        .selectAll()
        .where((eb) =>
          eb.or([
            eb.and([eb('state', '=', CallLineState.Ringing), eb('since', '<', ringingBefore)]),
            eb.and([
              eb('seen', '<', silentBefore),
              eb.or([eb('state', '=', CallLineState.Connected), eb('member', '=', eb.ref('caller'))]),
            ]),
          ]),
        )
        .orderBy('since')
        .limit(limit)
        .execute()
    },

    /** The invite kind of a guest (personal or group), or undefined for someone who is not a guest. */
    async guestInviteKind(member: number): Promise<number | undefined> {
      const row = await db
        .selectFrom('guests')
        .innerJoin('invites', 'invites.code', 'guests.code')
        .select('invites.kind')
        .where('guests.timetick', '=', member)
        .executeTakeFirst()
      return row?.kind
    },

    /**
     * Call rows of the chats the member belongs to, newest first, before the `before` id: the
     * history. Deleted rows stay out.
     */
    async history(member: number, before: number, limit: number): Promise<MessageRow[]> {
      return db
        .selectFrom('chat_mess')
        .innerJoin('chat_members', (join) =>
          join.onRef('chat_members.chat_id', '=', 'chat_mess.chat_id').on('chat_members.member', '=', member),
        )
        .selectAll('chat_mess')
        .where(isCallRow())
        .where(sql<boolean>`(chat_mess.flags & ${sql.lit(ChatMessFlags.Deleted)}) = 0`)
        .where('chat_mess.timetick', '<', before)
        .orderBy('chat_mess.timetick', 'desc')
        .limit(limit)
        .execute()
    },
  }
}

export type CallsRepository = ReturnType<typeof createCallsRepository>
