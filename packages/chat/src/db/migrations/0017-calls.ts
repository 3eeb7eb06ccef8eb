import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'
import { isCallRow } from '../../calls/calls.repository.ts'

/**
 * Active calls (issue 19): one row per participant of a ringing or connected call. The member is
 * the primary key, so the database itself keeps "one active call per user" under parallel
 * initiates on every instance; the call's record stays the chat_mess row with the Call flag, and
 * these rows go when the call ends. The person called keeps the caller's offer on their line while
 * it rings, so a page opened after the ring began can still answer (call/active).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('call_lines')
    .addColumn('member', c.id, primaryKey())
    .addColumn('call_id', c.id, d(0))
    .addColumn('chat_id', c.id, d(0))
    .addColumn('peer', c.id, d(0))
    .addColumn('caller', c.id, d(0))
    .addColumn('state', c.integer, d(0))
    .addColumn('since', c.bigInteger, d(0))
    .addColumn('seen', c.bigInteger, d(0))
    .addColumn('offer', c.text, d(''))
    .execute()
  await db.schema.createIndex('call_lines_call').on('call_lines').column('call_id').execute()
  // The call history reads call rows only, of the caller's chats.
  await sql`CREATE INDEX chat_mess_calls ON chat_mess (chat_id, timetick) WHERE ${isCallRow()}`.execute(db)
}
