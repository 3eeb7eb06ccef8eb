import { ApiError, AppFlag, flagNames } from '@atrium/platform'
import { adminHref, adminTime, emptyState, html, pager } from '@atrium/platform/admin'
import type { FastifyInstance } from 'fastify'
import {
  type App,
  type Apps,
  appName,
  appOrigins,
  eventTypeList,
  normalizeOrigin,
  normalizeWebhookUrl,
} from '../apps/apps.repository.ts'
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

export interface AppsPageOptions extends AdminContext {
  apps: Pick<Apps, 'create' | 'page' | 'get' | 'update' | 'rotateSecret' | 'rotateWebhookSecret'>
  /** How often each gateway node re-reads the apps' origins and flags (Proxy.RouteReloadMs). */
  reloadMs: number
}

const LIST = `${ADMIN_ROOT}/Apps`
const CREATE = `${LIST}/Create`
const DETAIL = `${ADMIN_ROOT}/AppDetail`
const FLAG_NAMES = Object.keys(AppFlag) as (keyof typeof AppFlag)[]
/** As many origins as an operator types by hand; the CORS map holds them all in memory. */
const MAX_ORIGINS = 100

function eventTypes(app: App): string {
  try {
    return (JSON.parse(app.event_types) as string[]).join(', ')
  } catch {
    return ''
  }
}

/** The origins of the form's text (one per line, or separated by spaces or commas), validated as the CLI's `--origins`. */
function formOrigins(text: string): string[] {
  const origins = [
    ...new Set(
      text
        .split(/[\s,]+/)
        .filter(Boolean)
        .map(normalizeOrigin),
    ),
  ]
  if (origins.length > MAX_ORIGINS) throw new ApiError('InvalidRequest', `at most ${MAX_ORIGINS} origins`)
  return origins
}

/** The flags ticked in a form. */
function formFlags(form: Record<string, string>): number {
  let flags = 0
  for (const name of FLAG_NAMES) if (form[name] === 'true') flags |= AppFlag[name]
  return flags
}

/** The flag checkboxes of a form, ticked as `flags` says. */
function flagBoxes(flags: number) {
  return FLAG_NAMES.map(
    (name) => html`<label for=${`flag-${name}`}><input id=${`flag-${name}`} type="checkbox" name=${name}
      value="true" checked=${(flags & AppFlag[name]) !== 0} /> ${name}</label>`,
  )
}

/**
 * /ProxyAdmin/Apps and /ProxyAdmin/AppDetail: registered apps, and per app its AppFlags, CORS
 * origins and secrets. The app secret and the webhook signing secret are never shown, except a
 * new one once, on the page that answers its rotation; the audit never holds them.
 */
export default async function appsPage(app: FastifyInstance, options: AppsPageOptions) {
  const { apps, users, reloadMs } = options

  app.get(LIST, { schema: pageQuery }, async (request, reply) => {
    const query = request.query as PageQuery
    const limit = listLimit(query)
    const rows = await apps.page({ before: idField(query.FromTick), limit })
    const owners = await userLabels(
      users,
      rows.map((row) => row.owner),
    )
    return sendAdminPage(request, reply, {
      title: 'Apps',
      current: LIST,
      body: html`${
        rows.length === 0
          ? emptyState('No app is registered yet. Register one below (or with “atrium app create”).')
          : html`<table>
            <thead><tr><th>App</th><th>Owner</th><th>Flags</th><th>Origins</th><th>Webhook</th><th>Events</th><th>Created</th></tr></thead>
            <tbody>${rows.map(
              (row) => html`<tr>
                <td><a href=${adminHref(DETAIL, { Id: row.id })}>${row.name}</a> <span class="muted">(${String(row.id)})</span></td>
                <td>${owners.get(row.owner) ?? '—'}</td>
                <td>${flagNames(AppFlag, row.flags).join(', ') || '—'}</td>
                <td>${appOrigins(row).join(' ')}</td>
                <td><code>${row.callback_url}</code></td>
                <td>${eventTypes(row)}</td>
                <td>${adminTime(row.created)}</td>
              </tr>`,
            )}</tbody>
          </table>`
      }
      ${pager(nextPage(LIST, query, rows, limit))}
      <h2>Register an app</h2>
      <form class="filters" method="post" action=${CREATE}>
        <label for="app-name">Name <input id="app-name" name="Name" required maxlength="200" /></label>
        <label for="app-owner">Owner's user id <input id="app-owner" name="Owner" required inputmode="numeric"
          pattern="[0-9]+" /></label>
        ${flagBoxes(0)}
        <label for="app-origins">Allowed origins, one per line
          <textarea id="app-origins" name="Origins" rows="3" cols="40" placeholder="https://shop.example"></textarea></label>
        <label for="app-callback">Webhook URL (optional)
          <input id="app-callback" name="Callback" type="url" placeholder="https://shop.example/hooks/atrium" /></label>
        <label for="app-events">Webhook events, by commas or spaces
          <input id="app-events" name="Events" placeholder="NewChatMessage, ChatCreated" /></label>
        <button type="submit">Register the app</button>
      </form>`,
    })
  })

  app.get(DETAIL, { schema: pageQuery }, async (request, reply) => {
    const id = idField((request.query as Record<string, string>).Id)
    const row = id === undefined ? undefined : await apps.get(id)
    if (!row)
      return reply
        .code(303)
        .header('location', adminHref(LIST, { error: 'No such app.' }))
        .send()
    const owner = (await userLabels(users, [row.owner])).get(row.owner) ?? '—'
    const hidden = html`<input type="hidden" name="Id" value=${String(row.id)} />`
    return sendAdminPage(request, reply, {
      title: `${row.name} (${row.id})`,
      current: LIST,
      body: html`
        <dl class="fields">
          <dt>App id</dt><dd><code>${String(row.id)}</code></dd>
          <dt>Owner</dt><dd>${owner}</dd>
          <dt>Webhook</dt><dd><code>${row.callback_url || '(none)'}</code></dd>
          <dt>Events</dt><dd>${eventTypes(row) || '(none)'}</dd>
          <dt>Created</dt><dd>${adminTime(row.created)}</dd>
        </dl>
        <p class="muted">Flags and origins apply on every gateway node within ${String(reloadMs / 1000)} seconds
          (Proxy.RouteReloadMs).</p>
        <h2>Flags</h2>
        <form class="filters" method="post" action=${`${DETAIL}/Flags`}>
          ${hidden}
          ${flagBoxes(row.flags)}
          <button type="submit">Save flags</button>
        </form>
        <h2>Allowed origins</h2>
        <form class="filters" method="post" action=${`${DETAIL}/Origins`}>
          ${hidden}
          <label for="origins">One origin per line, e.g. https://shop.example
            <textarea id="origins" name="Origins" rows="4" cols="50">${appOrigins(row).join('\n')}</textarea></label>
          <button type="submit">Save origins</button>
        </form>
        <h2>Secrets</h2>
        <p class="muted">A new secret is shown once, on the page that answers; the old app secret no longer signs in,
          the old signing secret is dropped at the webhook dispatcher's next reload.</p>
        <form class="inline" method="post" action=${`${DETAIL}/RotateSecret`}>
          ${hidden}<button class="danger" type="submit">Rotate app secret</button>
        </form>
        <form class="inline" method="post" action=${`${DETAIL}/RotateWebhookSecret`}>
          ${hidden}<button class="danger" type="submit">Rotate webhook signing secret</button>
        </form>
      `,
    })
  })

  const target = (form: Record<string, string>) => form.Id ?? ''
  const back = (form: Record<string, string>) => adminHref(DETAIL, { Id: form.Id })
  async function appOf(form: Record<string, string>): Promise<App> {
    const id = idField(form.Id)
    const row = id === undefined ? undefined : await apps.get(id)
    if (!row) throw new ApiError('NotFound', 'No such app.')
    return row
  }

  operatorAction(app, options, {
    path: `${DETAIL}/Flags`,
    action: 'app.flags',
    target,
    back,
    perform: async (form) => {
      const row = await appOf(form)
      const flags = formFlags(form)
      await apps.update(row.id, { flags })
      const names = flagNames(AppFlag, flags).join(', ') || 'no flags'
      return { detail: names, notice: `Flags of ${row.name} saved: ${names}.` }
    },
  })

  operatorAction(app, options, {
    path: `${DETAIL}/Origins`,
    action: 'app.origins',
    target,
    back,
    perform: async (form) => {
      const origins = formOrigins(form.Origins ?? '')
      const row = await appOf(form)
      await apps.update(row.id, { origins })
      const list = origins.join(' ') || 'none'
      return { detail: list, notice: `Origins of ${row.name} saved: ${list}.` }
    },
  })

  /** A rotation's answer: the new secret, once, on a page that is never stored or redirected to. */
  function shownOnce(row: App, what: string, secret: string, use: string) {
    return {
      title: `New ${what} of ${row.name}`,
      current: LIST,
      body: html`
        <p>This is the new ${what} of ${row.name} (${String(row.id)}). It is shown only now: copy it and store it safely.</p>
        <p><code id="new-secret">${secret}</code></p>
        <p class="muted">${use}</p>
        <p><a href=${adminHref(DETAIL, { Id: row.id })}>Back to ${row.name}</a></p>
      `,
    }
  }

  operatorAction(app, options, {
    path: `${DETAIL}/RotateSecret`,
    action: 'app.secret.rotate',
    target,
    back,
    perform: async (form) => {
      const row = await appOf(form)
      const secret = await apps.rotateSecret(row.id)
      if (!secret) throw new ApiError('NotFound', 'No such app.')
      return {
        notice: `A new app secret was made for ${row.name}; the old one no longer signs in (app tokens already issued run until they expire).`,
        page: shownOnce(row, 'app secret', secret, 'The app signs in with its id and this secret (AppLogin).'),
      }
    },
  })

  operatorAction(app, options, {
    path: `${DETAIL}/RotateWebhookSecret`,
    action: 'app.webhook_secret.rotate',
    target,
    back,
    perform: async (form) => {
      const row = await appOf(form)
      const secret = await apps.rotateWebhookSecret(row.id)
      if (!secret) throw new ApiError('NotFound', 'No such app.')
      return {
        notice: `A new webhook signing secret was made for ${row.name}; deliveries are signed with it within Webhooks.ReloadMs.`,
        page: shownOnce(
          row,
          'webhook signing secret',
          secret,
          'The app checks the signature of each webhook delivery with it.',
        ),
      }
    },
  })

  operatorAction(app, options, {
    path: CREATE,
    action: 'app.create',
    target: (form) => (form.Name ?? '').trim(),
    back: () => LIST,
    perform: async (form) => {
      const name = appName((form.Name ?? '').trim())
      const owner = idField(form.Owner?.trim())
      if (owner === undefined || !(await users.get(owner))) {
        throw new ApiError(
          'InvalidRequest',
          `No user ${JSON.stringify((form.Owner ?? '').slice(0, 40))} to own the app.`,
        )
      }
      const flags = formFlags(form)
      const origins = formOrigins(form.Origins ?? '')
      const callbackUrl = normalizeWebhookUrl((form.Callback ?? '').trim())
      const eventTypes = eventTypeList((form.Events ?? '').split(/[\s,]+/).filter(Boolean))
      const { app: created, secret } = await apps.create({ name, owner, flags, callbackUrl, origins, eventTypes })
      return {
        detail: `${created.id} ${name}`,
        notice: `App ${name} registered (${created.id}).`,
        page: {
          title: `${name} registered`,
          current: LIST,
          body: html`
            <p>${name} is registered as app <code>${String(created.id)}</code>. Its secrets are shown only now: copy them
              and store them safely.</p>
            <dl class="fields">
              <dt>App id</dt><dd><code id="new-app-id">${String(created.id)}</code></dd>
              <dt>App secret (AppLogin)</dt><dd><code id="new-secret">${secret}</code></dd>
              <dt>Webhook signing secret</dt><dd><code id="new-webhook-secret">${created.webhook_secret}</code></dd>
            </dl>
            <p><a href=${adminHref(DETAIL, { Id: created.id })}>Open ${name}</a></p>
          `,
        },
      }
    },
  })
}
