/**
 * The checkpoint thread of SQLite databases (started by sqlite-checkpoints.ts): its own connection
 * to each registered file copies the write-ahead log into the database every CHECKPOINT_MS, so the
 * connection that writes never does (PASSIVE: it neither waits for nor blocks the writer). When the
 * log still holds RESTART_FRAMES pages after that, a RESTART checkpoint waits for the writer to
 * finish its transaction and lets the next one start the log from its beginning, which bounds it.
 */
import { existsSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { parentPort } from 'node:worker_threads'
import type { FromCheckpointer, ToCheckpointer } from './sqlite-checkpoints.ts'

const CHECKPOINT_MS = 200
/** About 40 MB of 4 KB pages: SQLite's own automatic checkpoint runs at 1,000. */
const RESTART_FRAMES = 10_000
/** How long the RESTART checkpoint waits for the writer's transaction. */
const RESTART_WAIT_MS = 2000

const port = parentPort!
const connections = new Map<number, DatabaseSync>()

function checkpoint(connection: DatabaseSync) {
  try {
    const { log } = connection.prepare('pragma wal_checkpoint(PASSIVE)').get() as { log: number }
    if (log >= RESTART_FRAMES) connection.prepare('pragma wal_checkpoint(RESTART)').get()
  } catch {
    // Busy, or the file went away under a closing database: the next turn tries again.
  }
}

port.on('message', (message: ToCheckpointer) => {
  if (message.kind === 'add') {
    try {
      // Opening would create an empty database where the file went away (a closing test's directory).
      if (!existsSync(message.path)) throw new Error(`${message.path} no longer exists`)
      const connection = new DatabaseSync(message.path)
      connection.exec(`pragma busy_timeout = ${RESTART_WAIT_MS}`)
      connections.set(message.id, connection)
    } catch (error) {
      const answer: FromCheckpointer = { kind: 'refused', id: message.id, reason: String(error) }
      port.postMessage(answer)
    }
    return
  }
  const connection = connections.get(message.id)
  connections.delete(message.id)
  try {
    connection?.close()
  } finally {
    const answer: FromCheckpointer = { kind: 'removed', id: message.id }
    port.postMessage(answer)
  }
})

setInterval(() => {
  for (const connection of connections.values()) checkpoint(connection)
}, CHECKPOINT_MS)
