import { columnType as c, notNullDefault as d } from '@atrium/platform'
import type { Kysely } from 'kysely'

/**
 * Sign-in codes are budgeted per client address and overall (Otp.MaxCodesPerClientPerHour,
 * Otp.MaxCodesPerHour): each challenge keeps the client key it was started from, and the hour's
 * codes are counted by client and by time.
 */
// biome-ignore lint/suspicious/noExplicitAny: a migration runs against the schema as it was, not the current one
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('login_challenges').addColumn('client', c.text, d('')).execute()
  await db.schema.createIndex('login_challenges_client').on('login_challenges').columns(['client', 'created']).execute()
  await db.schema.createIndex('login_challenges_created').on('login_challenges').column('created').execute()
}
