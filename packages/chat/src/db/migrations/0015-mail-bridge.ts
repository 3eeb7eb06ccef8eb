import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/**
 * The inbound email bridge (issue 18, item 5; docs/delivery.md "Inbound email bridge"). Each email
 * sender writing to one address is a guest of that address's invite (`mail_contacts`, keyed by the
 * guest id), with the address replies are sent from and the thread state; `mail_messages` maps
 * every Message-ID received or sent to its chat, so a thread stays in its chat and a retried
 * delivery is stored once; `mail_user_invites` is the hidden personal invite behind a CRM user's
 * address; `mail_state` holds the reply sender's cursor in the event feed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mail_contacts')
    .addColumn('member', c.id, primaryKey())
    .addColumn('chat_id', c.id, d(0))
    .addColumn('address', c.text, d(''))
    .addColumn('recipient', c.text, d(''))
    .addColumn('subject', c.text, d(''))
    .addColumn('last_message_id', c.text, d(''))
    .addColumn('thread_refs', c.text, d(''))
    .addColumn('timetick_update', c.id, d(0))
    .execute()
  await db.schema.createIndex('mail_contacts_chat').on('mail_contacts').column('chat_id').execute()
  await db.schema
    .createTable('mail_messages')
    .addColumn('message_id', c.text, d(''))
    .addColumn('member', c.id, d(0))
    .addColumn('chat_id', c.id, d(0))
    .addColumn('mess_id', c.id, d(0))
    .addColumn('outbound', c.bool, d(false))
    .addPrimaryKeyConstraint('mail_messages_pk', ['message_id', 'member'])
    .execute()
  await db.schema
    .createTable('mail_user_invites')
    .addColumn('crm_id', c.id, primaryKey())
    .addColumn('code', c.text, d(''))
    .execute()
  await db.schema
    .createTable('mail_state')
    .addColumn('name', c.text, primaryKey())
    .addColumn('cursor', c.id, d(0))
    .execute()
}
