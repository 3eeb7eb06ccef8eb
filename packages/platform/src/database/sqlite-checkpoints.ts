import type { DatabaseSync } from 'node:sqlite'
import { Worker } from 'node:worker_threads'

/** Messages to the checkpoint thread: start or stop checkpointing one connection's file. */
export type ToCheckpointer =
  | { kind: 'add'; id: number; path: string; behind: Int32Array }
  | { kind: 'remove'; id: number }

/** Its answers: a removal done, or a file it could not open (that connection checkpoints itself again). */
export type FromCheckpointer = { kind: 'removed'; id: number } | { kind: 'refused'; id: number; reason: string }

/**
 * The thread's script: beside this module in a checkout; in a built bundle, where import.meta.url
 * is the process's main.mjs, its own bundle beside it (scripts/build.ts).
 */
const WORKER_SCRIPT = new URL(
  import.meta.url.endsWith('.ts') ? './sqlite-checkpointer.ts' : './sqlite-checkpointer.mjs',
  import.meta.url,
)

/** SQLite's own default, restored on a connection whose file the thread cannot serve. */
const AUTOMATIC_CHECKPOINT_PAGES = 1000
/** How long closing a database waits for the thread to let go of the file. */
const REMOVE_WAIT_MS = 1000

let worker: Worker | undefined
let nextId = 1
/** The writing connections the thread checkpoints for, by registration. */
const served = new Map<number, DatabaseSync>()
const removals = new Map<number, () => void>()

/** Hands a connection's checkpoints back to it: the thread stopped or could not open its file. */
function checkpointItself(id: number) {
  const connection = served.get(id)
  served.delete(id)
  if (connection?.isOpen) connection.exec(`pragma wal_autocheckpoint = ${AUTOMATIC_CHECKPOINT_PAGES}`)
}

function startWorker(): Worker {
  const thread = new Worker(WORKER_SCRIPT)
  thread.on('message', (message: FromCheckpointer) => {
    if (message.kind === 'refused') checkpointItself(message.id)
    else removals.get(message.id)?.()
  })
  // A thread that cannot start (its script missing from a bundle) also exits, which hands back below.
  thread.on('error', () => {})
  thread.on('exit', () => {
    worker = undefined
    for (const id of [...served.keys()]) checkpointItself(id)
    for (const done of removals.values()) done()
  })
  // Never what keeps a process alive (after the listeners, which would hold it again): a process
  // that is done ends, and SQLite checkpoints the log when its last connection closes.
  thread.unref()
  return thread
}

/**
 * Moves the checkpoints of a file database's writing connection to one thread per process
 * (sqlite-checkpointer.ts). A checkpoint copies the write-ahead log into the database file and
 * syncs it; SQLite runs one inside the commit that passes 1,000 log pages, so on a slow disk a
 * write transaction now and then took milliseconds more, on the one thread that serves requests
 * (issue 22: 5.5 ms per commit of a chat batch on a virtual disk, about 1.5 ms without). The
 * connection keeps its WAL mode and durability (`synchronous=NORMAL` syncs at checkpoints).
 * `beforeTransaction` runs a checkpoint on the connection itself while the thread finds its log too
 * long to start over (a writer that never lets go of its lock: sqlite-checkpointer.ts); `stop` is to
 * be awaited before the connection closes.
 */
export function checkpointInBackground(connection: DatabaseSync, path: string) {
  worker ??= startWorker()
  const thread = worker
  const id = nextId++
  const behind = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT))
  served.set(id, connection)
  connection.exec('pragma wal_autocheckpoint = 0')
  thread.postMessage({ kind: 'add', id, path, behind } satisfies ToCheckpointer)
  function beforeTransaction() {
    if (Atomics.load(behind, 0) === 1 && served.has(id)) connection.exec('pragma wal_checkpoint(PASSIVE)')
  }
  async function stop() {
    if (!served.delete(id) || worker !== thread) return
    await new Promise<void>((resolve) => {
      // A timer the loop waits for: the thread itself is unref'd, so its answer alone would not keep it.
      const timer = setTimeout(resolve, REMOVE_WAIT_MS)
      removals.set(id, () => {
        clearTimeout(timer)
        resolve()
      })
      thread.postMessage({ kind: 'remove', id } satisfies ToCheckpointer)
    })
    removals.delete(id)
  }
  return { beforeTransaction, stop }
}
