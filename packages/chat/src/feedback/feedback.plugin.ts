import { ApiError, FeedbackType, type Service, timetickTime } from '@atrium/platform'
import { Type } from 'typebox'
import { requireMember } from '../access.ts'
import type { CallerResolver } from '../caller.ts'
import { Id, MemberId } from '../messages/messages.schema.ts'
import type { Store } from '../store.ts'
import { type FeedbackRow, NEGATIVE_UP_TO, POSITIVE_FROM } from './feedback.repository.ts'

export interface FeedbackPluginOptions {
  store: Store
  resolveCaller: CallerResolver
}

const RatingSummary = Type.Object({
  count: Type.Integer(),
  average: Type.Number(),
  positive: Type.Integer(),
  negative: Type.Integer(),
})

const createFeedback = {
  body: Type.Object(
    {
      object_type: Type.Integer({
        minimum: 1,
        description: 'FeedbackType: 1 App, 2 Service, 3 Product, 4 Order, 5 Chat, 6 User.',
      }),
      object_id: Type.String({ minLength: 1, maxLength: 200 }),
      object_owner: Type.Optional(MemberId),
      rating: Type.Integer({ minimum: 1, maximum: 5 }),
      comment: Type.Optional(Type.String({ maxLength: 4000 })),
      chat_id: Type.Optional(Id),
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      feedback: Type.Object({
        id: Type.String(),
        object_type: Type.Integer(),
        object_id: Type.String(),
        object_owner: Type.String(),
        rating: Type.Integer(),
        sentiment: Type.Union([Type.Literal('positive'), Type.Literal('neutral'), Type.Literal('negative')]),
        comment: Type.String(),
        chat_id: Type.String(),
        time: Type.String(),
      }),
      owner_rating: Type.Union([RatingSummary, Type.Null()]),
    }),
  },
}

const FEEDBACK_TYPES = new Set<number>(Object.values(FeedbackType))

function sentimentOf(rating: number) {
  if (rating >= POSITIVE_FROM) return 'positive' as const
  return rating <= NEGATIVE_UP_TO ? ('negative' as const) : ('neutral' as const)
}

/** create_feedback: a 1–5 rating of an object, optionally about a chat, tracked per object owner. */
export default async function feedbackPlugin(app: Service, { store, resolveCaller }: FeedbackPluginOptions) {
  app.post('/create_feedback', { schema: createFeedback }, async (request) => {
    const caller = await resolveCaller(request)
    const body = request.body
    if (!FEEDBACK_TYPES.has(body.object_type)) {
      throw new ApiError('InvalidRequest', `object_type must be one of ${[...FEEDBACK_TYPES].join(', ')}`)
    }
    // Chat-based feedback is only from members of that chat.
    if (body.chat_id) await requireMember(store, Number(body.chat_id), caller)
    const tick = store.nextTick()
    const row: FeedbackRow = {
      timetick: tick,
      timetick_update: tick,
      owner: caller.member,
      object_type: body.object_type,
      object_id: body.object_id,
      object_owner: body.object_owner ? Number(body.object_owner) : 0,
      rating: body.rating,
      comment: body.comment ?? '',
      chat_id: body.chat_id ? Number(body.chat_id) : 0,
    }
    await store.feedback.insert(row)
    return {
      feedback: {
        id: String(row.timetick),
        object_type: row.object_type,
        object_id: row.object_id,
        object_owner: String(row.object_owner),
        rating: row.rating,
        sentiment: sentimentOf(row.rating),
        comment: row.comment,
        chat_id: String(row.chat_id),
        time: new Date(timetickTime(row.timetick)).toISOString(),
      },
      owner_rating: row.object_owner ? await store.feedback.ownerRating(row.object_owner) : null,
    }
  })
}
