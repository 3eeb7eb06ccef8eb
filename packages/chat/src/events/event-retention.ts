import { type Service, startBackgroundSweep, timetickAt } from '@atrium/platform'
import type { EventFeed } from './event-feed.ts'

export interface EventRetentionOptions {
  events: EventFeed
  retentionHours: number
  sweepSeconds: number
  now: () => number
}

/**
 * Deletes the events older than `retentionHours` every `sweepSeconds` (docs/events.md, "Retention"):
 * those whose cursor tick is below the tick of that time, but never the head (EventFeed.pruneBefore).
 * Every chat instance sweeps: two sweeping at once simply find fewer rows.
 */
export function startEventRetention(
  app: Service,
  { events, retentionHours, sweepSeconds, now }: EventRetentionOptions,
) {
  startBackgroundSweep(app, sweepSeconds * 1000, 'chat event retention sweep', async () => {
    const deleted = await events.pruneBefore(timetickAt(now() - retentionHours * 3_600_000))
    if (deleted > 0) app.log.info({ deleted, retentionHours }, 'chat events past the retention deleted')
  })
}
