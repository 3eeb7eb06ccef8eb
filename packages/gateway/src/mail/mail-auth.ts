import { Resolver } from 'node:dns/promises'
import type { DKIMResult } from 'mailauth'
import { dkimVerify } from 'mailauth/lib/dkim/verify.js'
import { spf } from 'mailauth/lib/spf/index.js'

/** What the SMTP session knows of one message. */
export interface MailAuthInput {
  raw: Buffer
  /** The client's IP address. */
  ip: string
  /** The EHLO/HELO name. */
  helo: string
  /** MAIL FROM; empty for a bounce. */
  sender: string
  /** This server's name, for the SPF record's macros. */
  mta: string
}

/** An SMTP refusal: the reply code and its text with the enhanced status code first. */
export interface Refusal {
  responseCode: number
  message: string
}

export type MailAuthOutcome = { ok: true; fromDomain: string; via: 'dkim' | 'spf' } | ({ ok: false } & Refusal)

export type DnsLookup = (name: string, rrtype: string) => Promise<string[][] | string[]>

/** A DNS lookup through the configured servers (Dns.Servers), or the system's when none are set. */
export function createDnsLookup(servers: readonly string[], timeoutMs: number, tries: number): DnsLookup {
  const resolver = new Resolver({ timeout: timeoutMs, tries })
  if (servers.length > 0) resolver.setServers([...servers])
  return (name, rrtype) => resolver.resolve(name, rrtype) as Promise<string[][] | string[]>
}

const RELAXED = 'relaxed/relaxed'

function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase()
}

function refuse(responseCode: number, message: string): MailAuthOutcome {
  return { ok: false, responseCode, message }
}

// mailauth reports the c= tag as `format` (its type declaration names it `canonicalization`); a
// missing body part means simple (RFC 6376 §3.5).
function canonicalizationOf(signature: DKIMResult): string {
  const [header = 'simple', body = 'simple'] = String((signature as { format?: unknown }).format ?? '')
    .toLowerCase()
    .split('/')
    .map((part) => part.trim())
  return `${header || 'simple'}/${body}`
}

// A signature with l= covering only part of the body would let anyone append text below it.
function verified(signature: DKIMResult): boolean {
  return signature.status.result === 'pass' && !signature.status.underSized
}

function describe(signature: DKIMResult): string {
  const why = signature.status.comment ? ` (${signature.status.comment})` : ''
  return `d=${signature.signingDomain}${why}`
}

/**
 * Checks that the author's domain vouches for the message (spec "The gateway" item 11): a DKIM
 * signature with relaxed/relaxed canonicalisation that verifies and whose d= is exactly the From:
 * domain, or else an SPF pass for a MAIL FROM in exactly the From: domain (strict alignment,
 * RFC 7489 §3.1). Refusals use the RFC 7372 enhanced codes; a DNS failure is temporary (451).
 */
export function createMailAuth(lookup: DnsLookup) {
  return async function authenticateMail({ raw, ip, helo, sender, mta }: MailAuthInput): Promise<MailAuthOutcome> {
    const dkim = await dkimVerify(raw, { resolver: lookup, ...(sender ? { sender } : {}) })
    if (dkim.headerFrom.length !== 1) return refuse(550, '5.7.1 The message needs exactly one From: address')
    const fromDomain = domainOf(dkim.headerFrom[0]!)
    const signatures = dkim.results.filter((result) => result.status.result !== 'none')
    const authorSigned = signatures.filter((result) => result.signingDomain.toLowerCase() === fromDomain)
    const passing = authorSigned.filter(verified)
    if (passing.some((result) => canonicalizationOf(result) === RELAXED)) return { ok: true, fromDomain, via: 'dkim' }

    let spfResult = ''
    if (sender && domainOf(sender) === fromDomain) {
      const checked = await spf({ sender, ip, helo, mta, resolver: lookup })
      spfResult = checked.status.result
      if (spfResult === 'pass') return { ok: true, fromDomain, via: 'spf' }
    }

    const temporary = signatures.some((result) => /^temperr/.test(result.status.result)) || /^temperr/.test(spfResult)
    if (temporary) return refuse(451, '4.7.5 A DNS lookup for DKIM or SPF failed; try again later')
    if (passing.length > 0) {
      const used = passing.map((result) => `c=${canonicalizationOf(result)}`).join(', ')
      return refuse(550, `5.7.21 The DKIM signature of d=${fromDomain} uses ${used}; relaxed/relaxed is required`)
    }
    if (authorSigned.length > 0)
      return refuse(550, `5.7.20 The DKIM signature did not verify: ${authorSigned.map(describe).join('; ')}`)
    const others = signatures.filter(verified)
    if (others.length > 0) {
      const domains = others.map((result) => result.signingDomain).join(', ')
      return refuse(550, `5.7.22 DKIM d=${domains} is not aligned with the From: domain ${fromDomain}`)
    }
    if (signatures.length > 0)
      return refuse(550, `5.7.20 No DKIM signature verified: ${signatures.map(describe).join('; ')}`)
    const spfNote = spfResult ? `SPF for ${sender} is ${spfResult}` : `MAIL FROM is not in ${fromDomain}`
    return refuse(550, `5.7.20 No DKIM signature of ${fromDomain}, and ${spfNote}`)
  }
}

export type MailAuth = ReturnType<typeof createMailAuth>
