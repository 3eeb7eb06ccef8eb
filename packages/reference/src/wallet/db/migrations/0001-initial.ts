import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/** Balances, transactions and the event feed. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('balances')
    .addColumn('crm_id', c.id, d(0))
    .addColumn('currency', c.text, d(''))
    .addColumn('balance', c.bigInteger, d(0))
    .addColumn('hold', c.bigInteger, d(0))
    .addColumn('timetick_update', c.id, d(0))
    .addPrimaryKeyConstraint('balances_pk', ['crm_id', 'currency'])
    .execute()

  await db.schema
    .createTable('transactions')
    .addColumn('timetick', c.id, primaryKey())
    .addColumn('timetick_update', c.id, d(0))
    .addColumn('currency', c.text, d(''))
    .addColumn('tx_type', c.integer, d(0))
    .addColumn('state', c.integer, d(0))
    .addColumn('amount', c.bigInteger, d(0))
    .addColumn('fee', c.bigInteger, d(0))
    .addColumn('from_crm', c.id, d(0))
    .addColumn('to_crm', c.id, d(0))
    .addColumn('app_id', c.id, d(0))
    .addColumn('partner_name', c.text, d(''))
    .addColumn('comment', c.text, d(''))
    .execute()
  await db.schema.createIndex('transactions_from').on('transactions').columns(['from_crm', 'timetick']).execute()
  await db.schema.createIndex('transactions_to').on('transactions').columns(['to_crm', 'timetick']).execute()

  await db.schema
    .createTable('wallet_events')
    .addColumn('timetick', c.id, primaryKey())
    .addColumn('tick_update', c.id, d(0))
    .addColumn('addressee', c.id, d(0))
    .addColumn('app_id', c.id, d(0))
    .addColumn('event_type', c.text, d(''))
    .addColumn('data', c.json, d('{}'))
    .execute()
  await db.schema.createIndex('wallet_events_tick').on('wallet_events').column('tick_update').unique().execute()
  await db.schema
    .createIndex('wallet_events_addressee')
    .on('wallet_events')
    .columns(['addressee', 'tick_update'])
    .execute()
  await db.schema.createIndex('wallet_events_app').on('wallet_events').columns(['app_id', 'tick_update']).execute()
}
