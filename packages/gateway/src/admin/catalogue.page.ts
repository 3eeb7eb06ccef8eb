import { AppFlag, flagNames } from '@atrium/platform'
import { adminTime, emptyState, html } from '@atrium/platform/admin'
import type { FastifyInstance } from 'fastify'
import { type App, appOrigins } from '../apps/apps.repository.ts'
import type { ProjectDomain } from '../domains/domains.repository.ts'
import { challengeName, challengeValue, VERIFIED } from '../domains/domains.repository.ts'
import type { FederationPartner } from '../federation/federation.repository.ts'
import { ADMIN_ROOT, type AdminContext, pageQuery, sendAdminPage, userLabels } from './admin-shell.ts'

export interface CataloguePageOptions extends AdminContext {
  apps: { list(): Promise<App[]> }
  domains: { list(): Promise<ProjectDomain[]> }
  federation: { partners: { list(): Promise<FederationPartner[]> } }
}

const APPS = `${ADMIN_ROOT}/Apps`
const DOMAINS = `${ADMIN_ROOT}/Domains`
const PARTNERS = `${ADMIN_ROOT}/Partners`

function eventTypes(app: App): string {
  try {
    return (JSON.parse(app.event_types) as string[]).join(', ')
  } catch {
    return ''
  }
}

/**
 * /ProxyAdmin/Apps, /ProxyAdmin/Domains and /ProxyAdmin/Partners: what operators register with the
 * CLI (`atrium app …`, `atrium domain …`, `atrium partner …`), shown read-only. These are short
 * operator-made lists, shown whole; secrets never appear.
 */
export default async function cataloguePage(app: FastifyInstance, options: CataloguePageOptions) {
  const { apps, domains, federation, users } = options

  app.get(APPS, { schema: pageQuery }, async (request, reply) => {
    const rows = await apps.list()
    const owners = await userLabels(
      users,
      rows.map((row) => row.owner),
    )
    return sendAdminPage(request, reply, {
      title: 'Apps',
      current: APPS,
      body: html`${
        rows.length === 0
          ? emptyState('No app is registered. Register one with “atrium app create”.')
          : html`<table>
            <thead><tr><th>App</th><th>Owner</th><th>Flags</th><th>Origins</th><th>Webhook</th><th>Events</th><th>Created</th></tr></thead>
            <tbody>${rows.map(
              (row) => html`<tr>
                <td>${row.name} <span class="muted">(${String(row.id)})</span></td>
                <td>${owners.get(row.owner) ?? '—'}</td>
                <td>${flagNames(AppFlag, row.flags).join(', ') || '—'}</td>
                <td>${appOrigins(row).join(' ')}</td>
                <td><code>${row.callback_url}</code></td>
                <td>${eventTypes(row)}</td>
                <td>${adminTime(row.created)}</td>
              </tr>`,
            )}</tbody>
          </table>`
      }`,
    })
  })

  app.get(DOMAINS, { schema: pageQuery }, async (request, reply) => {
    const rows = await domains.list()
    return sendAdminPage(request, reply, {
      title: 'Domains',
      current: DOMAINS,
      body: html`${
        rows.length === 0
          ? emptyState('No project domain yet. Add one with “atrium domain add”.')
          : html`<table>
            <thead><tr><th>Domain</th><th>State</th><th>TXT record to publish</th><th>Last check</th><th>Verified</th><th>Last error</th></tr></thead>
            <tbody>${rows.map(
              (row) => html`<tr>
                <td>${row.domain}</td>
                <td>${row.state === VERIFIED ? 'verified' : 'pending verification'}</td>
                <td><code>${challengeName(row.domain)}</code> <code>${challengeValue(row.token)}</code></td>
                <td>${adminTime(row.checked) || 'not yet'}</td>
                <td>${adminTime(row.verified)}</td>
                <td>${row.last_error}</td>
              </tr>`,
            )}</tbody>
          </table>`
      }`,
    })
  })

  app.get(PARTNERS, { schema: pageQuery }, async (request, reply) => {
    const rows = await federation.partners.list()
    return sendAdminPage(request, reply, {
      title: 'Federation partners',
      current: PARTNERS,
      body: html`${
        rows.length === 0
          ? emptyState('No federation partner yet. Add one with “atrium partner add”.')
          : html`<table>
            <thead><tr><th>Partner</th><th>Id</th><th>Issuer</th><th>Client id</th><th>Scopes</th><th>Added</th></tr></thead>
            <tbody>${rows.map(
              (row) => html`<tr>
                <td>${row.name}</td>
                <td><code>${row.slug}</code></td>
                <td><code>${row.issuer}</code></td>
                <td><code>${row.client_id}</code></td>
                <td>${row.scopes}</td>
                <td>${adminTime(row.created)}</td>
              </tr>`,
            )}</tbody>
          </table>`
      }`,
    })
  })
}
