/**
 * Tables of bench/sse.ts: deliveries, latency and CPU per server and rate, memory per connection,
 * and each server's ratios to nchan in the same run.
 */

/** One server at one publish rate, over the measured window. */
export interface Row {
  target: string
  rate: number
  published: number
  expected: number
  received: number
  p50: number
  p99: number
  max: number
  cpuPercent: number
  cpuPerDelivery: number
  marginalPerDelivery: number
}

/** Memory of one server before and after its streams opened. */
export interface Memory {
  target: string
  idle: number
  connected: number
  perConnection: number
  /** V8 heap in use per connection after a collection; 0 when not known (nginx). */
  heapPerConnection: number
  connectSeconds: number
}

export const number = (value: number) => Math.round(value).toLocaleString('en')
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`

/** Prints the markdown tables for `fanout` streams per event. */
export function printTables(rows: Row[], memory: Memory[], fanout: number) {
  console.log(
    '\n| server | ev/s | deliveries/s (due) | p50 ms | p99 ms | max ms | CPU % of a core | CPU µs/delivery | above idle |',
  )
  console.log('|---|---|---|---|---|---|---|---|---|')
  for (const row of rows) {
    const window = row.expected / row.rate / fanout
    console.log(
      `| ${row.target} | ${row.rate} | ${number(row.received / window)} (${number(row.expected / window)}) | ` +
        `${row.p50.toFixed(1)} | ${row.p99.toFixed(1)} | ${row.max.toFixed(0)} | ${row.cpuPercent.toFixed(1)} | ` +
        `${row.cpuPerDelivery.toFixed(1)} | ${row.marginalPerDelivery.toFixed(1)} |`,
    )
  }
  console.log(
    '\n| server | RSS before | RSS with streams | RSS per connection | V8 heap per connection | connect time |',
  )
  console.log('|---|---|---|---|---|---|')
  for (const m of memory) {
    console.log(
      `| ${m.target} | ${mb(m.idle)} | ${mb(m.connected)} | ${(m.perConnection / 1024).toFixed(1)} KB | ${m.heapPerConnection ? `${(m.heapPerConnection / 1024).toFixed(1)} KB` : '—'} | ${m.connectSeconds.toFixed(1)} s |`,
    )
  }
  const nchan = rows.filter((row) => row.target === 'nchan')
  const nchanMemory = memory.find((m) => m.target === 'nchan')
  if (nchan.length === 0) return
  for (const name of new Set(rows.map((row) => row.target))) {
    if (name === 'nchan') continue
    const ratios = rows
      .filter((row) => row.target === name)
      .map((row) => {
        const peer = nchan.find((other) => other.rate === row.rate)
        if (!peer) return ''
        return `${row.rate} ev/s: CPU/delivery ×${(row.cpuPerDelivery / peer.cpuPerDelivery).toFixed(2)}, p99 ×${(row.p99 / peer.p99).toFixed(2)}`
      })
      .filter(Boolean)
    const own = memory.find((m) => m.target === name)
    if (own && nchanMemory)
      ratios.push(`memory/connection ×${(own.perConnection / nchanMemory.perConnection).toFixed(2)}`)
    if (ratios.length > 0) console.log(`${name} / nchan: ${ratios.join('; ')}`)
  }
}
