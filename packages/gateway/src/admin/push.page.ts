import { ApiError, type TimetickGenerator } from '@atrium/platform'
import { adminHref, adminTime, emptyState, filterForm, html, pager } from '@atrium/platform/admin'
import type { FastifyInstance } from 'fastify'
import type { PushDispatcher } from '../notifications/push-dispatcher.ts'
import { testPushMessage } from '../notifications/push-messages.ts'
import type { PushSubscriptions } from '../notifications/push-subscriptions.repository.ts'
import {
  ADMIN_ROOT,
  type AdminContext,
  idField,
  listLimit,
  nextPage,
  operatorAction,
  type PageQuery,
  pageQuery,
  sendAdminPage,
  userLabels,
} from './admin-shell.ts'

export interface PushPageOptions extends AdminContext {
  subscriptions: PushSubscriptions
  /** Absent on a node that does not send pushes (WebPush.Enabled off, or PushSending on another node). */
  dispatcher: PushDispatcher | undefined
  nextTick: TimetickGenerator
}

const PAGE = `${ADMIN_ROOT}/PushSubscriptions`

/** The push service's host: enough to tell browsers apart without showing the capability URL. */
function serviceOf(endpoint: string): string {
  return URL.parse(endpoint)?.host ?? ''
}

/**
 * /ProxyAdmin/PushSubscriptions (spec "Endpoints"): every browser's Web Push subscription with its
 * delivery state, and a Test action that sends one real push to it through the gateway's sender.
 */
export default async function pushPage(app: FastifyInstance, options: PushPageOptions) {
  const { subscriptions, dispatcher, users, nextTick } = options

  app.get(PAGE, { schema: pageQuery }, async (request, reply) => {
    const query = request.query as PageQuery
    const limit = listLimit(query)
    const rows = await subscriptions.page({ crmId: idField(query.User), before: idField(query.FromTick), limit })
    const names = await userLabels(
      users,
      rows.map((row) => row.crm_id),
    )
    return sendAdminPage(request, reply, {
      title: 'Push subscriptions',
      current: PAGE,
      body: html`
        ${
          dispatcher
            ? null
            : html`<p class="notice error">This node does not send pushes (WebPush.Enabled off, or PushSending
              on another node): the Test action is unavailable here.</p>`
        }
        ${filterForm(PAGE, [{ name: 'User', label: 'User (CRM id)', value: query.User ?? '' }])}
        ${
          rows.length === 0
            ? emptyState('No browser has subscribed to notifications yet.')
            : html`<table>
              <thead><tr><th>User</th><th>Push service</th><th>Browser</th><th>Subscribed</th><th>Last accepted</th>
                <th class="num">Failures</th><th>Last error</th><th></th></tr></thead>
              <tbody>${rows.map(
                (row) => html`<tr>
                  <td><a href=${adminHref(`${ADMIN_ROOT}/UserDetail`, { CrmId: row.crm_id })}>${names.get(row.crm_id)}</a></td>
                  <td><code>${serviceOf(row.endpoint)}</code></td>
                  <td class="muted">${row.user_agent}</td>
                  <td>${adminTime(row.created)}</td>
                  <td>${adminTime(row.last_success) || 'never'}</td>
                  <td class="num">${String(row.failures)}</td>
                  <td>${row.last_error}</td>
                  <td>${
                    dispatcher &&
                    html`<form class="inline" method="post" action=${`${PAGE}/Test`}>
                      <input type="hidden" name="Subscription" value=${String(row.id)} />
                      <button class="secondary" type="submit">Test</button>
                    </form>`
                  }</td>
                </tr>`,
              )}</tbody>
            </table>`
        }
        ${pager(nextPage(PAGE, query, rows, limit))}
      `,
    })
  })

  operatorAction(app, options, {
    path: `${PAGE}/Test`,
    action: 'push.test',
    target: (form) => `subscription ${form.Subscription ?? ''}`,
    back: () => PAGE,
    perform: async (form) => {
      if (!dispatcher) throw new ApiError('PushSendingDisabled', 'This node does not send pushes.')
      const id = idField(form.Subscription)
      const subscription = id === undefined ? undefined : await subscriptions.get(id)
      if (!subscription) throw new ApiError('NotFound', 'That subscription no longer exists.')
      const owner = `user ${subscription.crm_id}, ${serviceOf(subscription.endpoint)}`
      const outcome = await dispatcher.sendOnce(subscription, testPushMessage(nextTick()))
      if (outcome.kind === 'sent') return { detail: owner, notice: 'Test push accepted by the push service.' }
      if (outcome.kind === 'gone') {
        throw new ApiError('NotFound', `The push service says this browser unsubscribed (${outcome.status}); removed.`)
      }
      throw new ApiError('BadGateway', `The push was not delivered: ${outcome.error}`)
    },
  })
}
