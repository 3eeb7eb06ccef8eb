import { type Service, timetickAt } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { ChatDatabase } from '../db/schema.ts'

/** Rows one statement deletes at most: SQLite's write lock is held for one batch at a time. */
const PRUNE_BATCH = 5000

export interface EventRetentionOptions {
  db: Kysely<ChatDatabase>
  retentionHours: number
  sweepSeconds: number
  now: () => number
}

/**
 * Deletes the events older than `retentionHours` every `sweepSeconds` (docs/events.md, "Retention"):
 * rows whose cursor tick is below the tick of that time, in batches. The newest row always stays,
 * since its tick is the head the feed and the PostgreSQL sequencer continue from, and so do rows
 * not sequenced yet (tick 0). Every chat instance sweeps: two sweeping at once simply find fewer rows.
 */
export function startEventRetention(app: Service, { db, retentionHours, sweepSeconds, now }: EventRetentionOptions) {
  let running: Promise<void> | undefined

  async function sweep(): Promise<void> {
    const cutoff = timetickAt(now() - retentionHours * 3_600_000)
    const head = await db
      .selectFrom('chat_events')
      .select((eb) => eb.fn.max('tick_update').as('max'))
      .executeTakeFirst()
    const below = Math.min(cutoff, Number(head?.max ?? 0))
    let deleted = 0
    for (;;) {
      const result = await db
        .deleteFrom('chat_events')
        .where('timetick', 'in', (eb) =>
          eb
            .selectFrom('chat_events')
            .select('timetick')
            .where('tick_update', '>', 0)
            .where('tick_update', '<', below)
            .limit(PRUNE_BATCH),
        )
        .executeTakeFirst()
      const rows = Number(result.numDeletedRows)
      deleted += rows
      if (rows < PRUNE_BATCH) break
    }
    if (deleted > 0) app.log.info({ deleted, retentionHours }, 'chat events past the retention deleted')
  }

  const timer = setInterval(() => {
    if (running) return
    running = sweep()
      .catch((error: unknown) => app.log.error({ err: error }, 'chat event retention sweep failed'))
      .finally(() => {
        running = undefined
      })
  }, sweepSeconds * 1000)
  timer.unref()
  app.addHook('onClose', async () => {
    clearInterval(timer)
    await running
  })
}
