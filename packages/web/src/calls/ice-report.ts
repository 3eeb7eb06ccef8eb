/**
 * What ICE gathered on this side of a call, reported to the gateway's STUN diagnostics
 * (POST /auth/v1/stun/report, docs/stun.md) once gathering completes: the candidates, the address
 * the gateway's own STUN responder mapped, how long gathering and the first STUN answer took, and
 * the ICE servers that failed.
 */

/** One gathered candidate as the report carries it. */
export interface ReportedCandidate {
  type: 'host' | 'srflx' | 'prflx' | 'relay'
  protocol: 'udp' | 'tcp'
  address?: string
  port?: number
  relatedAddress?: string
  relatedPort?: number
  url?: string
}

/** The body of POST /auth/v1/stun/report. */
export interface IceReport {
  candidates: ReportedCandidate[]
  mappedAddress?: { address: string; port: number }
  gatheringMs: number
  stunRttMs?: number
  errors?: Array<{ url: string; code: number; text: string }>
}

/** The fields of an RTCIceCandidate the report reads. */
type GatheredCandidate = Pick<
  RTCIceCandidate,
  'type' | 'protocol' | 'address' | 'port' | 'relatedAddress' | 'relatedPort'
>

// The gateway's limits (docs/stun.md): what goes beyond them is left out rather than refused.
const MAX_CANDIDATES = 32
const MAX_ERRORS = 16
const MAX_TEXT = 200
const ADDRESS = /^[0-9A-Za-z.:%_-]{1,253}$/
const ICE_URL = /^(stun|stuns|turn|turns):[^\s\p{Cc}]{1,250}$/u

function address(value: string | null | undefined): string | undefined {
  return value && ADDRESS.test(value) ? value : undefined
}

function iceUrl(value: string | null | undefined): string | undefined {
  return value && ICE_URL.test(value) ? value : undefined
}

/** The host of a `stun:host:port` URL (brackets kept off an IPv6 literal). */
function stunHost(url: string): string | undefined {
  const match = /^stuns?:(\[[^\]]+\]|[^:?]+)/.exec(url)
  return match?.[1]?.replace(/^\[|\]$/g, '')
}

/**
 * Collects one peer connection's gathering; `gatewayHost` is the host the gateway's own STUN
 * responder is reached by (the page's), so that its server-reflexive answer becomes `mappedAddress`.
 */
export function createIceGatheringLog(gatewayHost: string, now: () => number = () => performance.now()) {
  const started = now()
  const candidates: ReportedCandidate[] = []
  const errors: NonNullable<IceReport['errors']> = []
  let stunRttMs: number | undefined
  let mappedAddress: IceReport['mappedAddress']

  return {
    /** A gathered candidate and the ICE server it came from (the event's `url`, null for host candidates). */
    candidate(candidate: GatheredCandidate, url: string | null | undefined) {
      const { type, protocol } = candidate
      if (!type || (protocol !== 'udp' && protocol !== 'tcp') || candidates.length >= MAX_CANDIDATES) return
      const entry: ReportedCandidate = { type, protocol }
      const fields = {
        address: address(candidate.address),
        port: candidate.port ?? undefined,
        relatedAddress: address(candidate.relatedAddress),
        relatedPort: candidate.relatedPort ?? undefined,
        url: iceUrl(url),
      }
      for (const [key, value] of Object.entries(fields)) if (value !== undefined) Object.assign(entry, { [key]: value })
      candidates.push(entry)
      if (type !== 'srflx') return
      stunRttMs ??= Math.round(now() - started)
      if (
        !mappedAddress &&
        entry.url &&
        stunHost(entry.url) === gatewayHost &&
        entry.address &&
        entry.port !== undefined
      )
        mappedAddress = { address: entry.address, port: entry.port }
    },

    /** An icecandidateerror: an ICE server that did not answer (701) or refused. */
    error({ url, errorCode, errorText }: { url: string; errorCode: number; errorText: string }) {
      const checked = iceUrl(url)
      if (!checked || errors.length >= MAX_ERRORS) return
      const text = errorText.replace(/\p{Cc}/gu, ' ').slice(0, MAX_TEXT)
      errors.push({ url: checked, code: Math.min(Math.max(Math.trunc(errorCode), 0), 999), text })
    },

    /** The report, as gathering completes. */
    report(): IceReport {
      return {
        candidates,
        gatheringMs: Math.min(Math.round(now() - started), 600_000),
        ...(mappedAddress ? { mappedAddress } : {}),
        ...(stunRttMs !== undefined ? { stunRttMs: Math.min(stunRttMs, 60_000) } : {}),
        ...(errors.length > 0 ? { errors } : {}),
      }
    },
  }
}
