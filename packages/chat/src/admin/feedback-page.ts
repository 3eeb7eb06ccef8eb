import { FeedbackType, type Service, timetickTime } from '@atrium/platform'
import { adminHref, adminTime, emptyState, filterForm, html, pager } from '@atrium/platform/admin'
import { Type } from 'typebox'
import type { AdminPageDeps } from './admin.plugin.ts'
import { ADMIN_ROOT, ListQuery, limitOf, numberOf, personLabel, sendPage } from './admin-shell.ts'

const FEEDBACK = `${ADMIN_ROOT}/Feedback`

const TYPE_NAMES = Object.fromEntries(Object.entries(FeedbackType).map(([name, value]) => [value, name])) as Record<
  number,
  string
>

const feedbackQuery = Type.Object({
  ObjectType: Type.Optional(
    Type.String({ pattern: '^([0-9]{1,3})?$', description: 'FeedbackType of the rated object.' }),
  ),
  Rating: Type.Optional(Type.String({ pattern: '^[1-5]?$', description: 'Only this rating (1–5).' })),
  ...ListQuery,
})

/** /ChatAdmin/Feedback: ratings and reviews, newest first, by rated kind and rating. */
export function feedbackPage(app: Service, { store, reads }: AdminPageDeps) {
  app.get(
    FEEDBACK,
    { schema: { hide: true, querystring: feedbackQuery }, config: { envelope: false } },
    async (request, reply) => {
      const query = request.query
      const limit = limitOf(query.Limit)
      const rows = await reads.feedback({
        objectType: numberOf(query.ObjectType),
        rating: numberOf(query.Rating),
        fromTick: numberOf(query.FromTick),
        limit,
      })
      const names = await store.profiles.names([
        ...new Set(rows.flatMap((row) => [Number(row.owner), Number(row.object_owner)]).filter(Boolean)),
      ])
      const next =
        rows.length === limit ? adminHref(FEEDBACK, { ...query, FromTick: rows.at(-1)!.timetick }) : undefined
      const body = html`
      ${filterForm(FEEDBACK, [
        {
          name: 'ObjectType',
          label: 'Rated',
          value: query.ObjectType ?? '',
          options: [
            ['', 'Anything'],
            ...Object.entries(TYPE_NAMES).map(([value, name]): [string, string] => [value, name]),
          ],
        },
        {
          name: 'Rating',
          label: 'Rating',
          value: query.Rating ?? '',
          options: [['', 'Any'], ...[5, 4, 3, 2, 1].map((stars): [string, string] => [String(stars), `${stars} of 5`])],
        },
        { name: 'Limit', label: 'Rows', value: query.Limit ?? '', type: 'number', placeholder: '100' },
      ])}
      ${
        rows.length === 0
          ? emptyState('No feedback matches these filters.')
          : html`<table>
              <thead><tr><th>When</th><th>From</th><th>Rated</th><th>Owner of it</th><th class="num">Rating</th><th>Comment</th></tr></thead>
              <tbody>
                ${rows.map(
                  (row) => html`<tr>
                    <td>${adminTime(timetickTime(Number(row.timetick)))}</td>
                    <td>${personLabel(names, Number(row.owner))}</td>
                    <td>${TYPE_NAMES[row.object_type] ?? row.object_type} <code>${row.object_id}</code>
                      ${Number(row.chat_id) !== 0 && html` <a href=${adminHref(`${ADMIN_ROOT}/ChatDetail`, { ChatId: row.chat_id })}>chat</a>`}</td>
                    <td>${Number(row.object_owner) ? personLabel(names, Number(row.object_owner)) : ''}</td>
                    <td class="num">${'★'.repeat(row.rating)}${'☆'.repeat(5 - row.rating)} <span class="visually-hidden">${row.rating} of 5</span></td>
                    <td>${row.comment}</td>
                  </tr>`,
                )}
              </tbody>
            </table>`
      }
      ${pager(next)}`
      return sendPage(reply, { title: 'Feedback', current: FEEDBACK, body })
    },
  )
}
