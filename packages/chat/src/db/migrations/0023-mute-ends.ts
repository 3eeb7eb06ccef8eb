import { columnType as c, notNullDefault as d } from '@atrium/platform'
import type { Kysely } from 'kysely'

/**
 * When a member's mute of a chat ends (docs/chat-api.md, update_member): epoch milliseconds, 0 for
 * a mute with no end. The mute itself stays the role's Muted flag; past its end it is over, read
 * so wherever it counts (members/mute.ts), so nothing has to sweep.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('chat_members').addColumn('muted_until', c.time, d(0)).execute()
}
