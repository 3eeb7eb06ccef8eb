import { Resolver } from 'node:dns/promises'
import { challengeName, challengeValue } from './domains.repository.ts'

export interface DnsCheckOptions {
  /** `ip` or `ip:port` (`[ipv6]:port`) of the servers to ask; empty uses the system resolvers. */
  servers: readonly string[]
  /** Milliseconds one query may take before it is retried or fails. */
  timeoutMs: number
  /** Attempts per server. */
  tries: number
}

export type DnsCheckOutcome = { ok: true } | { ok: false; reason: string }

/** DNS answers that mean "there is no such record", as opposed to a failure to ask. */
const NO_RECORD = new Set(['ENODATA', 'ENOTFOUND'])

/**
 * Creates the ownership check of project domains: it asks for the TXT records of
 * `_atrium-challenge.<domain>` and succeeds when one of them (its strings joined, RFC 7208 §3.3)
 * equals `atrium-verification=<token>`. Failures say why: no record, wrong value, or a DNS error.
 */
export function createDnsCheck({ servers, timeoutMs, tries }: DnsCheckOptions) {
  const resolver = new Resolver({ timeout: timeoutMs, tries })
  if (servers.length > 0) resolver.setServers([...servers])

  return async function checkDomain(domain: string, token: string): Promise<DnsCheckOutcome> {
    const name = challengeName(domain)
    const expected = challengeValue(token)
    let records: string[][]
    try {
      records = await resolver.resolveTxt(name)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unknown'
      if (NO_RECORD.has(code)) return { ok: false, reason: `no TXT record at ${name}` }
      return { ok: false, reason: `DNS lookup of ${name} failed (${code})` }
    }
    const values = records.map((chunks) => chunks.join(''))
    if (values.includes(expected)) return { ok: true }
    if (values.length === 0) return { ok: false, reason: `no TXT record at ${name}` }
    return { ok: false, reason: `TXT record at ${name} does not hold ${expected}` }
  }
}

export type DnsCheck = ReturnType<typeof createDnsCheck>
