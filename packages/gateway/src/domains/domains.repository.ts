import { isIP } from 'node:net'
import { domainToASCII } from 'node:url'
import { ApiError, type TimetickGenerator } from '@atrium/platform'
import type { Kysely } from 'kysely'
import { newToken } from '../auth/caller.ts'
import type { GatewayDatabase, ProjectDomainsTable } from '../db/schema.ts'

export type ProjectDomain = ProjectDomainsTable

export const PENDING = 'pending_verification'
export const VERIFIED = 'verified'

/** The name whose TXT records prove ownership of a domain. */
export function challengeName(domain: string): string {
  return `_atrium-challenge.${domain}`
}

/** The TXT value the owner publishes for a domain's token. */
export function challengeValue(token: string): string {
  return `atrium-verification=${token}`
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

/**
 * A domain as stored: lower-case ASCII (internationalised names in punycode), without a trailing
 * dot; throws InvalidDomain for anything that is not a host name of at least two labels.
 */
export function normalizeDomain(input: string): string {
  const trimmed = input.trim().replace(/\.$/, '')
  const ascii = trimmed && !trimmed.includes('_') ? domainToASCII(trimmed) : ''
  const labels = ascii.split('.')
  const valid =
    ascii.length > 0 &&
    ascii.length <= 253 &&
    isIP(trimmed) === 0 &&
    labels.length >= 2 &&
    labels.every((label) => LABEL.test(label)) &&
    !/^\d+$/.test(labels.at(-1)!)
  if (!valid) throw new ApiError('InvalidDomain', `Not a valid domain name: ${JSON.stringify(input.slice(0, 300))}`)
  return ascii
}

/** Project domains and their DNS ownership check (spec: "States and transitions"). */
export function createProjectDomains(
  db: Kysely<GatewayDatabase>,
  nextTick: TimetickGenerator,
  now: () => number = Date.now,
) {
  async function get(domain: string): Promise<ProjectDomain | undefined> {
    return db.selectFrom('project_domains').selectAll().where('domain', '=', domain).executeTakeFirst()
  }

  return {
    get,

    /**
     * Adds a domain in state pending_verification with a new random token; a domain already
     * present is returned as it is, so adding twice keeps the published token valid.
     */
    async add(input: string): Promise<ProjectDomain> {
      const domain = normalizeDomain(input)
      const existing = await get(domain)
      if (existing) return existing
      const row: ProjectDomain = {
        id: nextTick(),
        domain,
        token: newToken(24),
        state: PENDING,
        created: now(),
        checked: 0,
        verified: 0,
        last_error: '',
      }
      // Two concurrent adds of one domain meet at the unique index: the loser reads the winner's row.
      await db
        .insertInto('project_domains')
        .values(row)
        .onConflict((conflict) => conflict.column('domain').doNothing())
        .execute()
      return (await get(domain))!
    },

    /** A page of domains, newest first, older than the id `before` when given (the operator panel). */
    async page({ before, limit }: { before?: number; limit: number }): Promise<ProjectDomain[]> {
      let query = db.selectFrom('project_domains').selectAll()
      if (before !== undefined) query = query.where('id', '<', before)
      return query.orderBy('id', 'desc').limit(limit).execute()
    },

    async list(): Promise<ProjectDomain[]> {
      return db.selectFrom('project_domains').selectAll().orderBy('domain').execute()
    },

    async pending(): Promise<ProjectDomain[]> {
      return db.selectFrom('project_domains').selectAll().where('state', '=', PENDING).orderBy('id').execute()
    },

    /** Records a check: a success moves the domain to verified, a failure keeps its state and the reason. */
    async recordCheck(id: number, outcome: { ok: true } | { ok: false; reason: string }): Promise<ProjectDomain> {
      const time = now()
      const changes = outcome.ok
        ? { state: VERIFIED, checked: time, verified: time, last_error: '' }
        : { checked: time, last_error: outcome.reason }
      await db.updateTable('project_domains').set(changes).where('id', '=', id).execute()
      const row = await db.selectFrom('project_domains').selectAll().where('id', '=', id).executeTakeFirst()
      if (!row) throw new ApiError('NotFound', 'No such project domain.')
      return row
    },

    async remove(domain: string): Promise<boolean> {
      const result = await db
        .deleteFrom('project_domains')
        .where('domain', '=', normalizeDomain(domain))
        .executeTakeFirst()
      return result.numDeletedRows > 0n
    },
  }
}

export type ProjectDomains = ReturnType<typeof createProjectDomains>
