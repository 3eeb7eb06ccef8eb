/**
 * The checkpoint thread of SQLite databases (started by sqlite-checkpoints.ts): its own connection
 * to each registered file copies the write-ahead log into the database every CHECKPOINT_MS, so the
 * connection that writes never does (PASSIVE: it neither waits for nor blocks the writer).
 *
 * A writer starts the log from its beginning again by itself when every frame was copied and no
 * reader uses the log. Under writes that never pause, that moment may not come; so when the log
 * holds RESTART_FRAMES pages or more, a RESTART checkpoint makes the next writer start it over.
 * RESTART takes the writer's lock while it copies what is left and then waits for readers, so it
 * runs only when that will be short: right after a PASSIVE that copied every frame it saw within
 * QUICK_MS, and never waiting, neither for the writer nor for readers (busy_timeout 0: it gives up,
 * as a PASSIVE, when either is there). A RESTART that waited for the writer's transaction then
 * copied all of it with the lock held: a bulk load's transaction of tens of MB held the next one
 * past its 5 s busy timeout ("database is locked"; issue 22), as did one that waited 2 s for a
 * reader every 200 ms.
 *
 * A writer that holds its lock almost all the time (an import's back-to-back transactions) leaves
 * no moment for that, and its log grew without bound (4 GB in a bulk load of a million messages).
 * Past BEHIND_FRAMES, the thread raises the connection's shared `behind` flag, and its writer runs a
 * PASSIVE checkpoint itself before each transaction until the log is back under RESTART_FRAMES: it
 * waits for its own checkpoint, never for a lock, and its next transaction starts the log over. A
 * flag rather than a message, which an import's unbroken chain of promises would never let in.
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
/** About 80 MB: a log this long was not started over, so the writer checkpoints too until it is. */
const BEHIND_FRAMES = 20_000

/** The log's size and how much of it is in the database file, in pages. */
type Progress = { log: number; checkpointed: number }

const port = parentPort!
/** Each file's connection, and the flag its writer reads before each transaction. */
const connections = new Map<number, { connection: DatabaseSync; behind: Int32Array }>()

function checkpoint({ connection, behind }: { connection: DatabaseSync; behind: Int32Array }) {
  let log: number
  try {
    const started = performance.now()
    const progress = connection.prepare('pragma wal_checkpoint(PASSIVE)').get() as Progress
    log = progress.log
    const quick = performance.now() - started < QUICK_MS
    if (log >= RESTART_FRAMES && progress.checkpointed === log && quick) {
      connection.prepare('pragma wal_checkpoint(RESTART)').get()
    }
  } catch {
    // Busy, or the file went away under a closing database: the next turn tries again.
    return
  }
  const wasBehind = Atomics.load(behind, 0) === 1
  if (wasBehind ? log < RESTART_FRAMES : log >= BEHIND_FRAMES) Atomics.store(behind, 0, wasBehind ? 0 : 1)
}

port.on('message', (message: ToCheckpointer) => {
  if (message.kind === 'add') {
    try {
      // Opening would create an empty database where the file went away (a closing test's directory).
      if (!existsSync(message.path)) throw new Error(`${message.path} no longer exists`)
      const connection = new DatabaseSync(message.path)
      connection.exec('pragma busy_timeout = 0')
      connections.set(message.id, { connection, behind: message.behind })
    } catch (error) {
      const answer: FromCheckpointer = { kind: 'refused', id: message.id, reason: String(error) }
      port.postMessage(answer)
    }
    return
  }
  const served = connections.get(message.id)
  connections.delete(message.id)
  try {
    served?.connection.close()
  } finally {
    const answer: FromCheckpointer = { kind: 'removed', id: message.id }
    port.postMessage(answer)
  }
})

setInterval(() => {
  for (const served of connections.values()) checkpoint(served)
}, CHECKPOINT_MS)
