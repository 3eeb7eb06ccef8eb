import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/**
 * OAuth sign-in and Federation v2: the identities users signed in with at a provider (one account
 * per provider subject: unique), the partner identity providers added through the CLI, and the
 * flows under way (single use, short-lived, found by the hash of their state).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('federated_identities')
    .addColumn('id', c.id, primaryKey())
    .addColumn('crm_id', c.id, d(0))
    .addColumn('provider', c.text, d(''))
    .addColumn('subject', c.text, d(''))
    .addColumn('email', c.text, d(''))
    .addColumn('created', c.time, d(0))
    .addColumn('last_used', c.time, d(0))
    .execute()
  await db.schema
    .createIndex('federated_identities_subject')
    .unique()
    .on('federated_identities')
    .columns(['provider', 'subject'])
    .execute()
  await db.schema.createIndex('federated_identities_user').on('federated_identities').column('crm_id').execute()
  await db.schema
    .createTable('federation_partners')
    .addColumn('id', c.id, primaryKey())
    .addColumn('slug', c.text, d(''))
    .addColumn('name', c.text, d(''))
    .addColumn('logo_url', c.text, d(''))
    .addColumn('issuer', c.text, d(''))
    .addColumn('client_id', c.text, d(''))
    .addColumn('client_secret', c.text, d(''))
    .addColumn('scopes', c.text, d(''))
    .addColumn('created', c.time, d(0))
    .execute()
  await db.schema.createIndex('federation_partners_slug').unique().on('federation_partners').column('slug').execute()
  await db.schema
    .createTable('federated_flows')
    .addColumn('id', c.id, primaryKey())
    .addColumn('state_hash', c.text, d(''))
    .addColumn('provider', c.text, d(''))
    .addColumn('code_verifier', c.text, d(''))
    .addColumn('nonce', c.text, d(''))
    .addColumn('return_to', c.text, d(''))
    .addColumn('expires', c.time, d(0))
    .addColumn('consumed', c.integer, d(0))
    .execute()
  await db.schema.createIndex('federated_flows_state').unique().on('federated_flows').column('state_hash').execute()
  await db.schema.createIndex('federated_flows_expiry').on('federated_flows').column('expires').execute()
}
