import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { Client, escapeIdentifier } from 'pg'
import { postgresConnection } from './database.ts'

/** PostgreSQL's limit on a NOTIFY payload (bytes, less one): a longer one is refused. */
export const NOTIFY_PAYLOAD_MAX = 7999

export interface NotifyChannelOptions<Name extends string> {
  /** The database (`postgres://…[?schema=<name>]`) whose sessions share the channels. */
  url: string
  /** The channels' names; the URL's schema is added to each, so deployments in other schemas of the database never hear them. */
  names: readonly Name[]
  /** Each payload another connection sent on one of the channels, in the order the server delivers them. */
  onMessage: (name: Name, payload: string) => void
  /** A lost or refused connection; the channels connect again after `retryMs`. */
  onError: (error: unknown) => void
  /** Called each time the channels start listening: at first and after every reconnect (when notifications may have been missed). */
  onListening?: () => void
  retryMs?: number
}

export interface NotifyChannel<Name extends string> {
  /** Sends a payload to every other listener of a channel; nothing when the connection is down. */
  publish(name: Name, payload: string): Promise<void>
  /** Resolves once the channels listen (tests wait for it before publishing). */
  listening(): Promise<void>
  close(): Promise<void>
}

/**
 * `items` in batches, in order, each of which fits a payload once it is written as a JSON array
 * inside `overhead` bytes of other text: a batch holds at least one item, and none when `items`
 * is empty.
 */
export function notifyBatches<T>(items: readonly T[], overhead: number): T[][] {
  const room = NOTIFY_PAYLOAD_MAX - overhead
  const batches: T[][] = []
  let batch: T[] = []
  let used = 2
  for (const item of items) {
    const size = Buffer.byteLength(JSON.stringify(item)) + 1
    if (batch.length > 0 && used + size > room) {
      batches.push(batch)
      batch = []
      used = 2
    }
    batch.push(item)
    used += size
  }
  if (batch.length > 0) batches.push(batch)
  return batches
}

/** The channel a name and schema make: the schema hashed, so any schema name fits PostgreSQL's 63-byte identifiers. */
export function notifyChannelName(name: string, schema: string | null): string {
  const scope = createHash('sha256')
    .update(schema ?? '')
    .digest('hex')
    .slice(0, 16)
  return `${name}_${scope}`
}

/**
 * PostgreSQL LISTEN/NOTIFY channels on one connection of their own (a pooled one would lose its
 * LISTEN when released). Payloads are fire-and-forget: the server delivers them to the sessions
 * listening when it commits, and a session that is reconnecting misses what was sent meanwhile.
 * A lost connection is opened again after `retryMs`, and listens again. The connection's own
 * notifications come back to it from the server; they are dropped here (same backend process).
 */
export function openNotifyChannel<Name extends string>({
  url,
  names,
  onMessage,
  onError,
  onListening,
  retryMs = 1000,
}: NotifyChannelOptions<Name>): NotifyChannel<Name> {
  const { schema, poolMax: _poolMax, ...connection } = postgresConnection(url)
  const channels = new Map(names.map((name) => [name, notifyChannelName(name, schema)]))
  const nameOf = new Map([...channels].map(([name, channel]) => [channel, name]))
  let client: Client | undefined
  let closed = false
  let ready: () => void = () => {}
  let whenListening = new Promise<void>((resolve) => {
    ready = resolve
  })

  async function connect(): Promise<void> {
    while (!closed) {
      const next = new Client(connection)
      next.on('notification', (message) => {
        const name = nameOf.get(message.channel)
        if (name === undefined || message.payload === undefined) return
        if (message.processId === (next as Client & { processID?: number }).processID) return
        onMessage(name, message.payload)
      })
      next.on('error', (error) => {
        onError(error)
        lost(next)
      })
      next.on('end', () => lost(next))
      try {
        await next.connect()
        for (const channel of channels.values()) await next.query(`LISTEN ${escapeIdentifier(channel)}`)
        if (closed) {
          await next.end()
          return
        }
        client = next
        ready()
        onListening?.()
        return
      } catch (error) {
        onError(error)
        await next.end().catch(() => {})
        await sleep(retryMs)
      }
    }
  }

  function lost(gone: Client) {
    if (client !== gone) return
    client = undefined
    whenListening = new Promise<void>((resolve) => {
      ready = resolve
    })
    gone.end().catch(() => {})
    if (!closed) setTimeout(() => void connect(), retryMs).unref()
  }

  void connect()

  return {
    async publish(name, payload) {
      const current = client
      if (!current) return
      try {
        await current.query('SELECT pg_notify($1, $2)', [channels.get(name), payload])
      } catch (error) {
        onError(error)
      }
    },
    listening: () => whenListening,
    async close() {
      closed = true
      const current = client
      client = undefined
      ready()
      await current?.end().catch(() => {})
    },
  }
}
