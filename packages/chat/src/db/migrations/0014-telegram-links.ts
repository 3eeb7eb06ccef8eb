import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/**
 * Telegram links (issue 18, item 3): a person's linked Telegram chat, and the one-time tokens of the
 * `/start <token>` deep link that creates it. The primary key on member and the unique index on
 * telegram_chat_id make one Telegram chat per person and one person per Telegram chat, whatever
 * runs in parallel. Tokens are stored as their SHA-256, never as issued.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('telegram_links')
    .addColumn('member', c.id, primaryKey())
    .addColumn('telegram_chat_id', c.id, d(0))
    .addColumn('telegram_name', c.text, d(''))
    .addColumn('notify', c.bool, d(false))
    .addColumn('linked', c.time, d(0))
    .execute()
  await db.schema.createIndex('telegram_links_chat').on('telegram_links').column('telegram_chat_id').unique().execute()
  await db.schema
    .createTable('telegram_link_tokens')
    .addColumn('token_hash', c.text, primaryKey())
    .addColumn('member', c.id, d(0))
    .addColumn('expires', c.time, d(0))
    .execute()
  await db.schema.createIndex('telegram_link_tokens_member').on('telegram_link_tokens').column('member').execute()
}
