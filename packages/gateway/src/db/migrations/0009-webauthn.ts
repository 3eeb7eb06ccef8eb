import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/**
 * PassKey and Fido2Key sign-in (WebAuthn): the credentials users registered (a credential id is
 * unique across users) and the single-use challenges of registrations and sign-ins.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webauthn_credentials')
    .addColumn('id', c.id, primaryKey())
    .addColumn('crm_id', c.id, d(0))
    .addColumn('credential_id', c.text, d(''))
    .addColumn('public_key', c.text, d(''))
    .addColumn('counter', c.bigInteger, d(0))
    .addColumn('transports', c.text, d(''))
    .addColumn('kind', c.text, d('passkey'))
    .addColumn('device_type', c.text, d(''))
    .addColumn('backed_up', c.integer, d(0))
    .addColumn('name', c.text, d(''))
    .addColumn('created', c.time, d(0))
    .addColumn('last_used', c.time, d(0))
    .execute()
  await db.schema
    .createIndex('webauthn_credentials_credential')
    .unique()
    .on('webauthn_credentials')
    .column('credential_id')
    .execute()
  await db.schema.createIndex('webauthn_credentials_user').on('webauthn_credentials').column('crm_id').execute()
  await db.schema
    .createTable('webauthn_challenges')
    .addColumn('id', c.id, primaryKey())
    .addColumn('crm_id', c.id, d(0))
    .addColumn('purpose', c.text, d(''))
    .addColumn('kind', c.text, d(''))
    .addColumn('challenge', c.text, d(''))
    .addColumn('expires', c.time, d(0))
    .addColumn('consumed', c.integer, d(0))
    .execute()
  await db.schema.createIndex('webauthn_challenges_expiry').on('webauthn_challenges').column('expires').execute()
}
