import { type Kysely, sql } from 'kysely'
import { isSupportChat } from '../chats/chat-context.ts'
import type { ChatDatabase } from '../db/schema.ts'
import { isVisible } from '../db/visibility.ts'

/** A support chat whose customer waits for the team: the first message after the team's last answer. */
export interface WaitingChat {
  chat_id: number
  customer: number
  /** The customer's oldest unanswered message (its timetick gives the time it was written). */
  waiting_since: number
  /** How many visible messages the customer wrote since the team's last answer. */
  unanswered: number
}

/**
 * The SQL of support escalations. A support chat's customer is its owner (chats.owner) and
 * everyone else in it is the team, so an answer is any visible message by someone else.
 */
export function createEscalationsRepository(db: Kysely<ChatDatabase>) {
  return {
    /**
     * Support chats whose customer's oldest unanswered message is at or before `before` (a
     * timetick), the longest waiting first; `chatIds` narrows them to those chats, and `after` (a
     * cursor: the last waiting_since shown) to those waiting since later than it.
     */
    async waiting(before: number, limit: number, chatIds?: number[], after = 0): Promise<WaitingChat[]> {
      if (chatIds?.length === 0) return []
      const within = chatIds ? sql`AND c.timetick IN (${sql.join(chatIds)})` : sql``
      const lastAnswer = sql`COALESCE((SELECT MAX(a.timetick) FROM chat_mess a
          WHERE a.chat_id = c.timetick AND a.owner <> c.owner AND ${isVisible()}), 0)`
      const result = await sql<WaitingChat>`
        SELECT chat_id, customer, waiting_since, unanswered FROM (
          SELECT c.timetick AS chat_id, c.owner AS customer,
            (SELECT MIN(m.timetick) FROM chat_mess m
              WHERE m.chat_id = c.timetick AND m.owner = c.owner AND ${isVisible()} AND m.timetick > ${lastAnswer}
            ) AS waiting_since,
            (SELECT COUNT(*) FROM chat_mess m
              WHERE m.chat_id = c.timetick AND m.owner = c.owner AND ${isVisible()} AND m.timetick > ${lastAnswer}
            ) AS unanswered
          FROM chats c
          WHERE ${isSupportChat()} ${within}
        ) waiting
        WHERE waiting_since <= ${before} AND waiting_since > ${after}
        ORDER BY waiting_since
        LIMIT ${limit}`.execute(db)
      return result.rows.map((row) => ({
        chat_id: Number(row.chat_id),
        customer: Number(row.customer),
        waiting_since: Number(row.waiting_since),
        unanswered: Number(row.unanswered),
      }))
    },
  }
}

export type EscalationsRepository = ReturnType<typeof createEscalationsRepository>
