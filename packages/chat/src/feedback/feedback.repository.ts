import type { Kysely, Selectable } from 'kysely'
import type { ChatDatabase, FeedbackTable } from '../db/schema.ts'

export type FeedbackRow = Selectable<FeedbackTable>

export interface RatingSummary {
  count: number
  average: number
  positive: number
  negative: number
}

/** Ratings of 4 and 5 count as positive, 1 and 2 as negative, 3 as neither. */
export const POSITIVE_FROM = 4
export const NEGATIVE_UP_TO = 2

/** All SQL of the feedback table. */
export function createFeedbackRepository(db: Kysely<ChatDatabase>) {
  return {
    async insert(row: FeedbackRow): Promise<void> {
      await db.insertInto('feedback').values(row).execute()
    },

    /** Aggregate rating of everything owned by a CRM user (owner rating tracking). */
    async ownerRating(objectOwner: number): Promise<RatingSummary> {
      const row = await db
        .selectFrom('feedback')
        .select((eb) => [
          eb.fn.countAll().as('count'),
          eb.fn.avg('rating').as('average'),
          eb.fn.sum(eb.case().when('rating', '>=', POSITIVE_FROM).then(1).else(0).end()).as('positive'),
          eb.fn.sum(eb.case().when('rating', '<=', NEGATIVE_UP_TO).then(1).else(0).end()).as('negative'),
        ])
        .where('object_owner', '=', objectOwner)
        .executeTakeFirstOrThrow()
      return {
        count: Number(row.count),
        average: Math.round(Number(row.average ?? 0) * 100) / 100,
        positive: Number(row.positive ?? 0),
        negative: Number(row.negative ?? 0),
      }
    },
  }
}

export type FeedbackRepository = ReturnType<typeof createFeedbackRepository>
