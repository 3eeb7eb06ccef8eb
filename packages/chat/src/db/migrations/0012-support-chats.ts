import { type Kysely, sql } from 'kysely'
import { isSupportChat } from '../../chats/chat-context.ts'

/**
 * Support chats (issue 16, item 3) are found by their pair key `support:<customer>`, whose unique
 * index already makes one per customer. The escalation listing reads every support chat, so this
 * partial index holds just them, stated exactly as isSupportChat() states it so both dialects use
 * it, and the listing does not scan the chats of the whole project.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX chats_support ON chats (timetick) WHERE ${isSupportChat()}`.execute(db)
}
