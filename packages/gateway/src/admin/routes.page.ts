import { ApiError, flagNames, RouteFlags } from '@atrium/platform'
import { emptyState, html } from '@atrium/platform/admin'
import type { FastifyInstance } from 'fastify'
import type { Route, Routes } from '../proxy/routes.repository.ts'
import { ADMIN_ROOT, type AdminContext, operatorAction, pageQuery, sendAdminPage } from './admin-shell.ts'

export interface RoutesPageOptions extends AdminContext {
  routes: Routes
  /** The Modules setting's names, offered as upstreams. */
  moduleNames: string[]
}

const PAGE = `${ADMIN_ROOT}/Routes`
const FLAG_NAMES = Object.keys(RouteFlags) as (keyof typeof RouteFlags)[]

/** The RouteFlags bits of a form's checkboxes (one field per flag name). */
function formFlags(form: Record<string, string>): number {
  let flags = 0
  for (const name of FLAG_NAMES) if (form[name] === 'true') flags |= RouteFlags[name]
  return flags
}

/** A checkbox per RouteFlags name; `form` ties them to a form elsewhere in the row. */
function flagBoxes(route: Route | undefined, idPrefix: string, form?: string) {
  return FLAG_NAMES.map((name) => {
    const id = `${idPrefix}-${name}`
    return html`<label for=${id}><input id=${id} form=${form} type="checkbox" name=${name} value="true"
      checked=${route ? (route.flags & RouteFlags[name]) !== 0 : false} /> ${name}</label> `
  })
}

/**
 * /ProxyAdmin/Routes: the route map with its RouteFlags, edited live. Saving goes through the route
 * repository (the CLI's validation: canonical prefix, known module or http(s) URL, known flags),
 * whose table the proxy reads, so the next request follows the change.
 */
export default async function routesPage(app: FastifyInstance, options: RoutesPageOptions) {
  const { routes, moduleNames } = options

  app.get(PAGE, { schema: pageQuery }, async (request, reply) => {
    const rows = await routes.list()
    return sendAdminPage(request, reply, {
      title: 'Routes',
      current: PAGE,
      body: html`
        <p class="muted">Requests whose path lies under a prefix go to its upstream: a module
          (${moduleNames.join(', ') || 'none configured'}) or an http(s) URL. Changes apply to the next request.</p>
        ${
          rows.length === 0
            ? emptyState('No route yet: every path but the gateway’s own answers Not Found. Add one below.')
            : html`<table>
              <thead><tr><th>Prefix</th><th>Upstream</th><th>Flags</th><th></th></tr></thead>
              <tbody>${rows.map((route, index) => {
                const form = `route-${index}`
                return html`<tr>
                  <td><code>${route.prefix}</code></td>
                  <td><label class="visually-hidden" for=${`${form}-upstream`}>Upstream of ${route.prefix}</label>
                    <input id=${`${form}-upstream`} form=${form} name="Upstream" value=${route.upstream} /></td>
                  <td>${flagBoxes(route, form, form)}</td>
                  <td>
                    <form id=${form} class="inline" method="post" action=${`${PAGE}/Save`}>
                      <input type="hidden" name="Prefix" value=${route.prefix} />
                      <input type="hidden" name="Mode" value="edit" />
                      <button type="submit">Save</button>
                    </form>
                    <form class="inline" method="post" action=${`${PAGE}/Remove`}>
                      <input type="hidden" name="Prefix" value=${route.prefix} />
                      <button class="danger" type="submit">Remove</button>
                    </form>
                  </td>
                </tr>`
              })}</tbody>
            </table>`
        }
        <h2>Add a route</h2>
        <form class="filters" method="post" action=${`${PAGE}/Save`}>
          <input type="hidden" name="Mode" value="add" />
          <label for="new-prefix">Prefix<input id="new-prefix" name="Prefix" placeholder="/msg/" required /></label>
          <label for="new-upstream">Upstream<input id="new-upstream" name="Upstream" placeholder=${moduleNames[0] ?? 'http://10.0.0.5:8080'} required /></label>
          <span>${flagBoxes(undefined, 'new')}</span>
          <button type="submit">Add route</button>
        </form>
      `,
    })
  })

  operatorAction(app, options, {
    path: `${PAGE}/Save`,
    action: 'route.save',
    target: (form) => form.Prefix ?? '',
    back: () => PAGE,
    perform: async (form) => {
      const change = { upstream: (form.Upstream ?? '').trim(), flags: formFlags(form) }
      const prefix = form.Prefix ?? ''
      const route = form.Mode === 'add' ? await routes.add({ prefix, ...change }) : await routes.update(prefix, change)
      const flags = flagNames(RouteFlags, route.flags).join(', ') || 'no flags'
      return {
        detail: `${route.upstream}, ${flags}`,
        notice: `Route ${route.prefix} → ${route.upstream} (${flags}) saved.`,
      }
    },
  })

  operatorAction(app, options, {
    path: `${PAGE}/Remove`,
    action: 'route.remove',
    target: (form) => form.Prefix ?? '',
    back: () => PAGE,
    perform: async (form) => {
      const prefix = form.Prefix ?? ''
      if (!(await routes.remove(prefix))) throw new ApiError('NotFound', `No route for ${prefix}.`)
      return { notice: `Route ${prefix} removed.` }
    },
  })
}
