import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { Client, escapeIdentifier } from 'pg'
import { postgresConnection } from './database.ts'

/** PostgreSQL's limit on a NOTIFY payload (bytes, less one): a longer one is refused. */
export const NOTIFY_PAYLOAD_MAX = 7999

export interface NotifyChannelOptions {
  /** The database (`postgres://…[?schema=<name>]`) whose sessions share the channel. */
  url: string
  /** The channel's name; the URL's schema is added to it, so deployments in other schemas of the database never hear it. */
  name: string
  /** Each payload another connection sent on the channel, in the order the server delivers them. */
  onMessage: (payload: string) => void
  /** A lost or refused connection; the channel connects again after `retryMs`. */
  onError: (error: unknown) => void
  /** Called each time the channel starts listening: at first and after every reconnect (when notifications may have been missed). */
  onListening?: () => void
  retryMs?: number
}

export interface NotifyChannel {
  /** Sends a payload to every other listener of the channel; nothing when the connection is down. */
  publish(payload: string): Promise<void>
  /** Resolves once the channel listens (tests wait for it before publishing). */
  listening(): Promise<void>
  close(): Promise<void>
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
 * A PostgreSQL LISTEN/NOTIFY channel on a connection of its own (a pooled one would lose its
 * LISTEN when released). Payloads are fire-and-forget: the server delivers them to the sessions
 * listening when it commits, and a session that is reconnecting misses what was sent meanwhile.
 * A lost connection is opened again after `retryMs`, and listens again. The channel's own
 * notifications come back to it from the server; they are dropped here (same backend process).
 */
export function openNotifyChannel({
  url,
  name,
  onMessage,
  onError,
  onListening,
  retryMs = 1000,
}: NotifyChannelOptions): NotifyChannel {
  const { schema, ...connection } = postgresConnection(url)
  const channel = notifyChannelName(name, schema)
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
        if (message.channel !== channel || message.payload === undefined) return
        if (message.processId === (next as Client & { processID?: number }).processID) return
        onMessage(message.payload)
      })
      next.on('error', (error) => {
        onError(error)
        lost(next)
      })
      next.on('end', () => lost(next))
      try {
        await next.connect()
        await next.query(`LISTEN ${escapeIdentifier(channel)}`)
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
    async publish(payload) {
      const current = client
      if (!current) return
      try {
        await current.query('SELECT pg_notify($1, $2)', [channel, payload])
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
