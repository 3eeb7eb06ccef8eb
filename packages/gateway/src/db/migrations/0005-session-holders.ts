import type { Kysely } from 'kysely'

/**
 * Sessions are capped per holder (a user, or an app signed in with AppLogin): the cap's query
 * looks up a holder's sessions newest first, which this index serves for apps too (their sessions
 * all have crm_id 0, so the user index would scan every app's).
 */
// biome-ignore lint/suspicious/noExplicitAny: a migration runs against the schema as it was, not the current one
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('sessions_user').execute()
  await db.schema.createIndex('sessions_holder').on('sessions').columns(['crm_id', 'app_id', 'created']).execute()
}
