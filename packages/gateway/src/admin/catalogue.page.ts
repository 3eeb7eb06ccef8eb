import { ApiError } from '@atrium/platform'
import { adminTime, emptyState, html, pager } from '@atrium/platform/admin'
import type { FastifyInstance } from 'fastify'
import type { DnsCheck } from '../domains/dns-check.ts'
import { verifyProjectDomain } from '../domains/domains.plugin.ts'
import {
  challengeName,
  challengeValue,
  normalizeDomain,
  type ProjectDomains,
  VERIFIED,
} from '../domains/domains.repository.ts'
import type { Federation } from '../federation/federation.repository.ts'
import { checkedPartner, partnerScopes } from '../federation/partner-input.ts'
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
} from './admin-shell.ts'

export interface CataloguePageOptions extends AdminContext {
  domains: ProjectDomains
  /** The DNS TXT check the CLI's `atrium domain verify` and the background re-check run. */
  checkDomain: DnsCheck
  federation: { partners: Federation['partners'] }
}

const DOMAINS = `${ADMIN_ROOT}/Domains`
const PARTNERS = `${ADMIN_ROOT}/Partners`

/** A labelled text field of an add form. */
function field(name: string, label: string, placeholder = '', required = true) {
  const id = `new-${name}`
  return html`<label for=${id}>${label}<input id=${id} name=${name} placeholder=${placeholder} required=${required} /></label>`
}

/**
 * /ProxyAdmin/Domains and /ProxyAdmin/Partners: project domains with their DNS verification (add,
 * check now, remove) and federation partners (add, change scopes, remove), validated as the CLI's
 * `atrium domain …` and `atrium partner …`. Both lists page newest first by `FromTick`; a
 * partner's client secret never appears.
 */
export default async function cataloguePage(app: FastifyInstance, options: CataloguePageOptions) {
  const { domains, checkDomain, federation } = options

  app.get(DOMAINS, { schema: pageQuery }, async (request, reply) => {
    const query = request.query as PageQuery
    const limit = listLimit(query)
    const rows = await domains.page({ before: idField(query.FromTick), limit })
    return sendAdminPage(request, reply, {
      title: 'Domains',
      current: DOMAINS,
      body: html`
        <p class="muted">A domain is verified when the TXT record shown is published in its DNS. Pending domains are
          also re-checked in the background.</p>
        ${
          rows.length === 0
            ? emptyState('No project domain yet. Add one below.')
            : html`<table>
            <thead><tr><th>Domain</th><th>State</th><th>TXT record to publish</th><th>Last check</th><th>Verified</th><th>Last error</th><th></th></tr></thead>
            <tbody>${rows.map(
              (row) => html`<tr>
                <td>${row.domain}</td>
                <td>${row.state === VERIFIED ? 'verified' : 'pending verification'}</td>
                <td><code>${challengeName(row.domain)}</code> <code>${challengeValue(row.token)}</code></td>
                <td>${adminTime(row.checked) || 'not yet'}</td>
                <td>${adminTime(row.verified)}</td>
                <td>${row.last_error}</td>
                <td>
                  ${
                    row.state === VERIFIED
                      ? null
                      : html`<form class="inline" method="post" action=${`${DOMAINS}/Check`}>
                        <input type="hidden" name="Domain" value=${row.domain} /><button type="submit">Check now</button>
                      </form>`
                  }
                  <form class="inline" method="post" action=${`${DOMAINS}/Remove`}>
                    <input type="hidden" name="Domain" value=${row.domain} /><button class="danger" type="submit">Remove</button>
                  </form>
                </td>
              </tr>`,
            )}</tbody>
          </table>`
        }
        ${pager(nextPage(DOMAINS, query, rows, limit))}
        <h2>Add a domain</h2>
        <form class="filters" method="post" action=${`${DOMAINS}/Add`}>
          ${field('Domain', 'Domain', 'chat.example.com')}
          <button type="submit">Add domain</button>
        </form>
      `,
    })
  })

  operatorAction(app, options, {
    path: `${DOMAINS}/Add`,
    action: 'domain.add',
    target: (form) => form.Domain ?? '',
    back: () => DOMAINS,
    perform: async (form) => {
      const domain = normalizeDomain(form.Domain ?? '')
      if (await domains.get(domain)) throw new ApiError('Conflict', `${domain} is already a project domain.`)
      const row = await domains.add(domain)
      return {
        notice: `Domain ${row.domain} added: publish ${challengeName(row.domain)} TXT ${challengeValue(row.token)}, then Check now.`,
      }
    },
  })

  operatorAction(app, options, {
    path: `${DOMAINS}/Check`,
    action: 'domain.check',
    target: (form) => form.Domain ?? '',
    back: () => DOMAINS,
    perform: async (form) => {
      const row = await domains.get(normalizeDomain(form.Domain ?? ''))
      if (!row) throw new ApiError('NotFound', 'No such project domain.')
      const checked = await verifyProjectDomain(domains, checkDomain, row)
      if (checked.state !== VERIFIED)
        throw new ApiError('DomainNotVerified', `${row.domain} is not verified: ${checked.last_error}.`)
      return { notice: `Domain ${row.domain} is verified.` }
    },
  })

  operatorAction(app, options, {
    path: `${DOMAINS}/Remove`,
    action: 'domain.remove',
    target: (form) => form.Domain ?? '',
    back: () => DOMAINS,
    perform: async (form) => {
      const domain = normalizeDomain(form.Domain ?? '')
      if (!(await domains.remove(domain))) throw new ApiError('NotFound', 'No such project domain.')
      return { notice: `Domain ${domain} removed.` }
    },
  })

  app.get(PARTNERS, { schema: pageQuery }, async (request, reply) => {
    const query = request.query as PageQuery
    const limit = listLimit(query)
    const rows = await federation.partners.page({ before: idField(query.FromTick), limit })
    return sendAdminPage(request, reply, {
      title: 'Federation partners',
      current: PARTNERS,
      body: html`
        <p class="muted">Partner OpenID providers in the sign-in picker. Register
          <code>PublicOrigin/auth/v1/federated/return</code> as the redirect address at the partner.</p>
        ${
          rows.length === 0
            ? emptyState('No federation partner yet. Add one below.')
            : html`<table>
            <thead><tr><th>Partner</th><th>Id</th><th>Issuer</th><th>Client id</th><th>Scopes</th><th>Added</th><th></th></tr></thead>
            <tbody>${rows.map(
              (row, index) => html`<tr>
                <td>${row.name}</td>
                <td><code>${row.slug}</code></td>
                <td><code>${row.issuer}</code></td>
                <td><code>${row.client_id}</code></td>
                <td><label class="visually-hidden" for=${`partner-${index}-scopes`}>Scopes of ${row.slug}</label>
                  <input id=${`partner-${index}-scopes`} form=${`partner-${index}`} name="Scopes" value=${row.scopes} /></td>
                <td>${adminTime(row.created)}</td>
                <td>
                  <form id=${`partner-${index}`} class="inline" method="post" action=${`${PARTNERS}/Scopes`}>
                    <input type="hidden" name="Id" value=${row.slug} /><button type="submit">Save scopes</button>
                  </form>
                  <form class="inline" method="post" action=${`${PARTNERS}/Remove`}>
                    <input type="hidden" name="Id" value=${row.slug} /><button class="danger" type="submit">Remove</button>
                  </form>
                </td>
              </tr>`,
            )}</tbody>
          </table>`
        }
        ${pager(nextPage(PARTNERS, query, rows, limit))}
        <h2>Add a partner</h2>
        <form class="filters" method="post" action=${`${PARTNERS}/Add`}>
          ${field('Id', 'Id', 'acme')}
          ${field('Name', 'Name', 'Acme Corp')}
          ${field('Issuer', 'Issuer', 'https://login.acme.example')}
          ${field('ClientId', 'Client id')}
          <label for="new-ClientSecret">Client secret<input id="new-ClientSecret" name="ClientSecret" type="password" required /></label>
          ${field('Logo', 'Logo URL', 'https://acme.example/logo.svg', false)}
          ${field('Scopes', 'Scopes', 'openid email profile', false)}
          <button type="submit">Add partner</button>
        </form>
      `,
    })
  })

  operatorAction(app, options, {
    path: `${PARTNERS}/Add`,
    action: 'partner.add',
    target: (form) => form.Id ?? '',
    back: () => PARTNERS,
    perform: async (form) => {
      const input = checkedPartner({
        slug: form.Id ?? '',
        name: form.Name ?? '',
        issuer: form.Issuer ?? '',
        clientId: form.ClientId ?? '',
        clientSecret: form.ClientSecret ?? '',
        logo: form.Logo,
        scopes: form.Scopes?.trim() || undefined,
      })
      const partner = await federation.partners.add(input)
      if (!partner) throw new ApiError('Conflict', `A partner with id ${input.slug} exists already; remove it first.`)
      return {
        detail: `${partner.name}, ${partner.issuer}, client ${partner.client_id}, scopes ${partner.scopes}`,
        notice: `Partner ${partner.slug} (${partner.name}) added; the sign-in picker shows it now.`,
      }
    },
  })

  operatorAction(app, options, {
    path: `${PARTNERS}/Scopes`,
    action: 'partner.scopes',
    target: (form) => form.Id ?? '',
    back: () => PARTNERS,
    perform: async (form) => {
      const slug = form.Id ?? ''
      const scopes = partnerScopes(form.Scopes ?? '')
      if (!(await federation.partners.setScopes(slug, scopes))) throw new ApiError('NotFound', `No partner ${slug}.`)
      return { detail: scopes, notice: `Partner ${slug} now asks for: ${scopes}.` }
    },
  })

  operatorAction(app, options, {
    path: `${PARTNERS}/Remove`,
    action: 'partner.remove',
    target: (form) => form.Id ?? '',
    back: () => PARTNERS,
    perform: async (form) => {
      const slug = form.Id ?? ''
      if (!(await federation.partners.remove(slug))) throw new ApiError('NotFound', `No partner ${slug}.`)
      return { notice: `Partner ${slug} removed; its users keep their accounts and other sign-in methods.` }
    },
  })
}
