import assert from 'node:assert/strict'
import { forEachDialect, json } from '@atrium/platform/testing'
import { startWallet } from '../../../test/support.ts'

forEachDialect('monitoring_stats reports the runtime and the counts after known activity', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  await wallet.deposit(1001, 'USD', 100)
  await wallet.deposit(1001, 'EUR', 5)
  await wallet.user(1001).send(1002, 'USD', 10)
  await wallet.user(1001).post('send', { to: '1002', currency: 'USD', amount: 1 }, { 'Idempotency-Key': 'm-1' })
  const withdrawal = await wallet.internal('withdraw', { crm_id: '1001', currency: 'USD', amount: 20 })
  await wallet.internal('withdraw', { crm_id: '1001', currency: 'USD', amount: 5 })
  await wallet.internal('transactions/state', { id: withdrawal.result.transaction.id, state: 3 })
  const requestsBefore = 7

  const stats = await wallet.monitoringStats()
  assert.equal(stats.service, 'wallet')
  assert.equal(stats.runtime.node_version, process.version)
  assert.equal(stats.runtime.pid, process.pid)
  assert.ok(stats.runtime.uptime_seconds > 0 && stats.runtime.uptime_seconds <= process.uptime())
  const { memory } = stats.runtime
  assert.ok(memory.rss_bytes > 10_000_000, 'a Node process holds more than 10 MB')
  assert.ok(memory.heap_used_bytes > 0 && memory.heap_used_bytes <= memory.heap_total_bytes)
  const delay = stats.runtime.event_loop_delay_ms
  assert.ok(delay.p50 >= 0 && delay.p50 <= delay.p99 && delay.p99 <= delay.max, JSON.stringify(delay))
  assert.equal(stats.runtime.requests_served, requestsBefore + 1, 'the seven calls above and this one')

  // Deposits 2, transfers 2, withdrawals 2 (one failed, one pending).
  assert.deepEqual(stats.database.transactions, { total: 6, pending: 1, completed: 4, failed: 1 })
  assert.equal(stats.database.dialect, dialect)
  assert.equal(stats.database.balances, 3, 'Alice in USD and EUR, Bob in USD')
  assert.equal(stats.database.idempotency_keys, 1)
  // TxInWallet and BalanceChanged: per deposit and withdrawal 2, per transfer 4 (both parties);
  // the failed withdrawal adds TxStateChanged and BalanceChanged (its hold released).
  assert.equal(stats.database.events, 2 * 2 + 2 * 4 + 2 * 2 + 2)
  assert.ok(stats.database.size_bytes > 0)
  assert.ok(stats.database.query_latency_ms >= 0 && stats.database.query_latency_ms < 5_000)

  const later = await wallet.monitoringStats()
  assert.equal(later.runtime.requests_served, requestsBefore + 2)
})

forEachDialect('monitoring_stats refuses a request without the gateway signature', async (t, dialect) => {
  const wallet = await startWallet(t, dialect)
  const unsigned = await fetch(`${wallet.base}/private/v1/monitoring_stats`)
  assert.equal(unsigned.status, 401)
  assert.equal((await json(unsigned)).error.code, 1008)
})
