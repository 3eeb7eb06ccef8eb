import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'

/**
 * Telegram bot widgets (issue 21): the scopes the gateway's profile sync sends with each person
 * (admin widgets are shown only to people holding the widget's scope); the custom widgets an
 * operator defines on /ChatAdmin/BotWidgets; the live widget messages the bot keeps fresh, one per
 * Telegram chat (a new one replaces it), kept in the database so a restart resumes refreshing;
 * indexes for the stats catalogue; and the operator action log, created here only if the
 * ChatAdmin migration (0018) did not.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('chat_profiles').addColumn('scopes', c.text, d('')).execute()
  await db.schema
    .createTable('telegram_widgets')
    .addColumn('name', c.text, primaryKey())
    .addColumn('title', c.text, d(''))
    .addColumn('template', c.text, d(''))
    .addColumn('scope', c.text, d(''))
    .addColumn('refresh_seconds', c.integer, d(60))
    .addColumn('updated_by', c.id, d(0))
    .addColumn('timetick_update', c.id, d(0))
    .execute()
  await db.schema
    .createTable('telegram_widget_views')
    .addColumn('telegram_chat_id', c.id, primaryKey())
    .addColumn('member', c.id, d(0))
    .addColumn('widget', c.text, d(''))
    .addColumn('message_id', c.bigInteger, d(0))
    .addColumn('live_until', c.time, d(0))
    .addColumn('next_refresh', c.time, d(0))
    .execute()
  // The refresher reads the views that are due, soonest first.
  await db.schema.createIndex('telegram_widget_views_due').on('telegram_widget_views').column('next_refresh').execute()
  // The stats catalogue: memberships begun today, and the files' count and size without a table scan.
  await db.schema.createIndex('chat_members_joined').on('chat_members').column('joined').execute()
  await sql`CREATE INDEX chat_mess_file_sizes ON chat_mess (flags, file_size) WHERE file_size > 0`.execute(db)
}
