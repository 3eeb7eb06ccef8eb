import { setImmediate as nextTurn } from 'node:timers/promises'
import type { TimetickGenerator } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'
import type { ChatDatabase } from '../db/schema.ts'
import type { MessageRow } from './messages.repository.ts'

/** A send's Idempotency-Key (send-once.ts): stored with the message, or the message is left to the ordinary path. */
export interface DirectPostKey {
  key: string
  fingerprint: string
  /** The answer stored with the key, as JSON. */
  response: string
}

interface Job {
  row: MessageRow
  /** The event's id and JSON data. */
  event: { timetick: number; data: string }
  key: DirectPostKey | undefined
  resolve: (posted: boolean) => void
  reject: (error: unknown) => void
}

// Enough to share one commit among every send of a busy moment, few enough for a quick statement.
const MAX_BATCH = 256
// One batch's inserts overlap the previous one's row locks and commit; more would only queue on the chats' rows.
const MAX_IN_FLIGHT = 2
// A SQLSTATE: the server refused the statement, so its transaction rolled back and wrote nothing.
const SERVER_ERROR = /^[0-9A-Z]{5}$/

/**
 * PostgreSQL: posts new messages the way postMessage does in a transaction (the access check, the
 * message row, the chat's newest message, the sender's read marker, the NewChatMessage event), for
 * every send that arrived during one turn of the event loop in one call of chat_post_messages
 * (migration 0005): one round trip and one commit (one WAL flush) for the batch, its events
 * sequenced in the same transaction, instead of about ten round trips and a commit per send and a
 * sequencer run after. Two batches run at a time; the next gathers meanwhile. A send with an
 * Idempotency-Key stores it with the message (migration 0021) when the key is new; otherwise it
 * is not posted here, and the ordinary path answers the message the key posted.
 *
 * `post` resolves true once the message and its readable event are committed. It resolves false,
 * having written nothing for it, when the access check refuses the send or when the server refused
 * the batch's statement (a deadlock, a value PostgreSQL cannot store): the caller then takes the
 * ordinary path, which gives the exact error or posts alone. Any other failure (the connection was
 * lost, so the commit is unknown) rejects, so a send is never posted twice. `posted` is called
 * after each commit that inserted messages.
 */
export function createDirectPosts(db: Kysely<ChatDatabase>, nextTick: TimetickGenerator, posted: () => void) {
  const queue: Job[] = []
  let inFlight = 0
  let gathering = false

  async function runBatch(batch: Job[]): Promise<void> {
    let ids: Set<number>
    try {
      ids = await insertBatch(batch)
    } catch (error) {
      const refused = SERVER_ERROR.test(String((error as { code?: unknown }).code))
      for (const job of batch) {
        if (refused) job.resolve(false)
        else job.reject(error)
      }
      return
    }
    if (ids.size > 0) posted()
    for (const job of batch) job.resolve(ids.has(job.row.timetick))
  }

  async function insertBatch(batch: Job[]): Promise<Set<number>> {
    const column = <T>(pick: (job: Job) => T) => batch.map(pick)
    const { rows } = await sql<{ id: number }>`select chat_post_messages(
        ${column((j) => j.row.timetick)}, ${column((j) => j.row.chat_id)}, ${column((j) => j.row.owner)},
        ${column((j) => j.row.content)}, ${column((j) => j.row.file_name)}, ${column((j) => j.row.file_size)},
        ${column((j) => j.row.flags)}, ${column((j) => j.row.linked_message_id)}, ${column((j) => j.row.link_kind)},
        ${column((j) => j.row.forwarded_from)}, ${column((j) => j.event.timetick)}, ${column((j) => j.event.data)},
        ${nextTick()}, ${column((j) => j.key?.key ?? '')}, ${column((j) => j.key?.fingerprint ?? '')},
        ${column((j) => j.key?.response ?? '')}, ${Date.now()}
      ) as id`.execute(db)
    return new Set(rows.map((row) => Number(row.id)))
  }

  // Waits one turn so the requests already received join, then starts batches while fewer than
  // MAX_IN_FLIGHT run.
  async function gather(): Promise<void> {
    if (gathering) return
    gathering = true
    await nextTurn()
    gathering = false
    while (queue.length > 0 && inFlight < MAX_IN_FLIGHT) {
      const batch = queue.splice(0, MAX_BATCH)
      inFlight++
      void runBatch(batch).finally(() => {
        inFlight--
        if (queue.length > 0) void gather()
      })
    }
  }

  /** Posts a new message (id and timetick_update the same, never edited) with its event, and its key if it has one. */
  return function post(row: MessageRow, event: Job['event'], key?: DirectPostKey): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      queue.push({ row, event, key, resolve, reject })
      void gather()
    })
  }
}
