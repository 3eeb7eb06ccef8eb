import { columnType as c, notNullDefault as d, primaryKey } from '@atrium/platform'
import type { Kysely } from 'kysely'

/** Payment orders and the Idempotency-Keys that started them. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('payment_orders')
    .addColumn('timetick', c.id, primaryKey())
    .addColumn('crm_id', c.id, d(0))
    .addColumn('app_id', c.id, d(0))
    .addColumn('flow', c.text, d(''))
    .addColumn('currency', c.text, d(''))
    .addColumn('amount', c.bigInteger, d(0))
    .addColumn('fee', c.bigInteger, d(0))
    .addColumn('total', c.bigInteger, d(0))
    .addColumn('state', c.text, d('pending'))
    .addColumn('address', c.text, d(''))
    .addColumn('wallet_tx_id', c.id, d(0))
    .addColumn('created', c.time, d(0))
    .addColumn('expires', c.time, d(0))
    .execute()
  await db.schema.createIndex('payment_orders_crm').on('payment_orders').columns(['crm_id', 'timetick']).execute()

  // The primary key makes one key start at most one order, even under parallel requests.
  await db.schema
    .createTable('order_keys')
    .addColumn('crm_id', c.id, d(0))
    .addColumn('idem_key', c.text, d(''))
    .addColumn('fingerprint', c.text, d(''))
    .addColumn('order_id', c.id, d(0))
    .addColumn('created', c.time, d(0))
    .addPrimaryKeyConstraint('order_keys_pk', ['crm_id', 'idem_key'])
    .execute()
  await db.schema.createIndex('order_keys_created').on('order_keys').column('created').execute()
}
