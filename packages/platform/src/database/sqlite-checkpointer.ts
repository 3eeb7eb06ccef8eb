/**
 * The checkpoint thread of SQLite databases (started by sqlite-checkpoints.ts): its own connection
 * to each registered file copies the write-ahead log into the database every CHECKPOINT_MS, so the
 * connection that writes never does (PASSIVE: it neither waits for nor blocks the writer).
 *
 * A writer starts the log from its beginning again by itself when every frame was copied and no
 * reader uses the log. Under writes that never pause, that moment may not come; so when the log
 * holds RESTART_FRAMES pages or more, a RESTART checkpoint makes the next writer start it over.
 * RESTART takes the writer's lock while it copies and then waits for readers, so it runs only when
 * it will be short: right after a PASSIVE that copied every frame it saw within QUICK_MS (what came
 * meanwhile is about as quick to copy), and waiting at most RESTART_WAIT_MS for the writer and for
 * readers. A writer, which waits up to 5 s for the lock, is never held near that: a RESTART that
 * waited for the writer's transaction and then copied it held bulk writes on a slow disk past 5 s
 * ("database is locked"; issue 22).
 */
import { existsSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { parentPort } from 'node:worker_threads'
import type { FromCheckpointer, ToCheckpointer } from './sqlite-checkpoints.ts'

const CHECKPOINT_MS = 200
/** About 40 MB of 4 KB pages: SQLite's own automatic checkpoint runs at 1,000. */
const RESTART_FRAMES = 10_000
/** A PASSIVE checkpoint at least this long is followed by no RESTART this turn. */
const QUICK_MS = 100
/** How long a RESTART checkpoint waits for the writer's transaction, and then for readers. */
const RESTART_WAIT_MS = 100

/** The log's size and how much of it is in the database file, in pages. */
type Progress = { log: number; checkpointed: number }

const port = parentPort!
const connections = new Map<number, DatabaseSync>()

function checkpoint(connection: DatabaseSync) {
  try {
    const started = performance.now()
    const { log, checkpointed } = connection.prepare('pragma wal_checkpoint(PASSIVE)').get() as Progress
    const quick = performance.now() - started < QUICK_MS
    if (log >= RESTART_FRAMES && checkpointed === log && quick) {
      connection.prepare('pragma wal_checkpoint(RESTART)').get()
    }
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
