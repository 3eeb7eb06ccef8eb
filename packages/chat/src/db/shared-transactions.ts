import { setImmediate as nextTurn } from 'node:timers/promises'
import { CompiledQuery, type Kysely } from 'kysely'
import type { ChatDatabase } from './schema.ts'

interface Job {
  work: (trx: Kysely<ChatDatabase>) => Promise<unknown>
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

const SAVEPOINT = CompiledQuery.raw('savepoint piece')
const RELEASE = CompiledQuery.raw('release piece')
const ROLLBACK = CompiledQuery.raw('rollback to piece')

// Large enough to amortise a commit, small enough that one batch does not hold the lock for long.
const MAX_BATCH = 64

/**
 * Runs write transactions on SQLite, which executes them one at a time on its one connection
 * anyway, and synchronously: a transaction never yields to I/O, so without waiting no other
 * request could join it. Work is therefore gathered until the event loop has read the requests
 * already received, then runs in one transaction, each piece in its own savepoint: a piece that
 * fails rolls back alone, while the commit (the WAL pages of every touched index, and one FTS5
 * segment written by `beforeCommit`) is paid once per batch. A piece's result is delivered after the commit.
 */
export function createSharedTransactions(
  db: Kysely<ChatDatabase>,
  /** Runs once per batch after its pieces, inside the transaction (the search index's queue). */
  beforeCommit: (trx: Kysely<ChatDatabase>) => Promise<void> = async () => {},
) {
  let queue: Job[] = []
  let draining = false

  async function runBatch(batch: Job[]) {
    const outcomes: { ok: boolean; value: unknown }[] = []
    try {
      await db.transaction().execute(async (trx) => {
        for (const job of batch) {
          await trx.executeQuery(SAVEPOINT)
          try {
            outcomes.push({ ok: true, value: await job.work(trx) })
            await trx.executeQuery(RELEASE)
          } catch (error) {
            await trx.executeQuery(ROLLBACK)
            await trx.executeQuery(RELEASE)
            outcomes.push({ ok: false, value: error })
          }
        }
        await beforeCommit(trx)
      })
    } catch (error) {
      for (const job of batch) job.reject(error)
      return
    }
    batch.forEach((job, index) => {
      const { ok, value } = outcomes[index]!
      if (ok) job.resolve(value)
      else job.reject(value)
    })
  }

  async function drain() {
    draining = true
    try {
      while (queue.length > 0) {
        await nextTurn()
        const batch = queue.slice(0, MAX_BATCH)
        queue = queue.slice(batch.length)
        await runBatch(batch)
      }
    } finally {
      draining = false
    }
  }

  return function sharedTransaction<T>(work: (trx: Kysely<ChatDatabase>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject })
      if (!draining) void drain()
    })
  }
}
