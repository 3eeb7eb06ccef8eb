import { ApiError, type Service, startBackgroundSweep } from '@atrium/platform'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { requireScope } from '../auth/caller.ts'
import type { DnsCheck } from './dns-check.ts'
import {
  challengeName,
  challengeValue,
  normalizeDomain,
  PENDING,
  type ProjectDomain,
  type ProjectDomains,
  VERIFIED,
} from './domains.repository.ts'

export interface DomainsPluginOptions {
  domains: ProjectDomains
  checkDomain: DnsCheck
  /** Interval of the background re-check of pending domains in seconds; 0 for none. */
  recheckSeconds: number
}

const DomainView = Type.Object({
  domain: Type.String(),
  state: Type.Union([Type.Literal(PENDING), Type.Literal(VERIFIED)]),
  txtName: Type.String({ description: 'Name of the TXT record to publish.' }),
  txtValue: Type.String({ description: 'Value of the TXT record to publish.' }),
  checked: Type.Integer({ description: 'Epoch ms of the last DNS check; 0 when never checked.' }),
  verified: Type.Integer({ description: 'Epoch ms the domain was verified; 0 while pending.' }),
  lastError: Type.String({ description: 'Why the last check failed; empty after a success.' }),
})

const DomainBody = Type.Object(
  { domain: Type.String({ minLength: 1, maxLength: 260, description: 'Host name, e.g. `chat.example.com`.' }) },
  { additionalProperties: false },
)

const addDomain = { body: DomainBody, response: { 200: DomainView } }
const listDomains = { response: { 200: Type.Object({ domains: Type.Array(DomainView) }) } }
const verifyDomain = { body: DomainBody, response: { 200: DomainView } }

/** The public shape of a project domain, with the TXT record its owner must publish. */
export function toDomainView(row: ProjectDomain) {
  return {
    domain: row.domain,
    state: row.state === VERIFIED ? VERIFIED : PENDING,
    txtName: challengeName(row.domain),
    txtValue: challengeValue(row.token),
    checked: row.checked,
    verified: row.verified,
    lastError: row.last_error,
  } as const
}

function requireAdmin(request: FastifyRequest) {
  requireScope(request.caller, 'admin', 'Project domains are managed with the admin scope.')
}

/**
 * Runs the DNS ownership check of one domain and records it; a verified domain stays verified
 * without a new lookup. Returns the row after the check.
 */
export async function verifyProjectDomain(domains: ProjectDomains, checkDomain: DnsCheck, row: ProjectDomain) {
  if (row.state === VERIFIED) return row
  return domains.recordCheck(row.id, await checkDomain(row.domain, row.token))
}

/**
 * Project domains under /auth/v1/domains (admin scope): add a domain and get the TXT record to
 * publish, list them, and verify ownership by DNS. Pending domains are also re-checked in the
 * background every `recheckSeconds`.
 */
export default async function domainsPlugin(
  app: Service,
  { domains, checkDomain, recheckSeconds }: DomainsPluginOptions,
) {
  app.post('/domains', { schema: addDomain }, async (request) => {
    requireAdmin(request)
    const row = await domains.add(request.body.domain)
    request.log.info({ domain: row.domain }, 'project domain added')
    return toDomainView(row)
  })

  app.get('/domains', { schema: listDomains }, async (request) => {
    requireAdmin(request)
    return { domains: (await domains.list()).map(toDomainView) }
  })

  app.post('/domains/verify', { schema: verifyDomain }, async (request) => {
    requireAdmin(request)
    const row = await domains.get(normalizeDomain(request.body.domain))
    if (!row) throw new ApiError('NotFound', 'No such project domain; add it first.')
    const checked = await verifyProjectDomain(domains, checkDomain, row)
    if (checked.state !== VERIFIED) throw new ApiError('DomainNotVerified', `Not verified: ${checked.last_error}.`)
    request.log.info({ domain: checked.domain }, 'project domain verified')
    return toDomainView(checked)
  })

  if (recheckSeconds > 0) {
    startBackgroundSweep(app, recheckSeconds * 1000, 'project domain re-check', async () => {
      for (const row of await domains.pending()) {
        const checked = await verifyProjectDomain(domains, checkDomain, row)
        if (checked.state === VERIFIED) app.log.info({ domain: checked.domain }, 'project domain verified')
      }
    })
  }
}
