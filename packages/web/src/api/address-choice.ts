/**
 * The address choice of a deployment with several gateways (spec "Platform rules": the frontend
 * probes p1, p2, p3 in parallel and sticks to the fastest single address). A page opened on the
 * project domain itself probes `https://p1.<domain>` … `p3` with a cheap GET of the health
 * endpoint, remembers the fastest (with an expiry) and moves the whole page there before anything
 * else happens. From then on the API, the event stream and the session cookie are all on that one
 * origin: no cross-origin requests, no CORS, and the cookie the gateway sets at sign-in is sent to
 * the gateway that set it. A page already on a pN address stays where it is while its gateway
 * answers (address-move.ts moves it when the gateway goes away). In development (no domain built
 * in, or the page on localhost or an IP address) nothing is probed.
 */

/** Non-secret: the address the project domain's page moves to, `{"origin": …, "expires": …}`. */
export const ADDRESS_KEY = 'atrium.address'

/** How long a choice is kept before the addresses are probed again. */
export const ADDRESS_KEPT_MS = 24 * 60 * 60 * 1000

/** How long a probe may take; a slower address is not chosen. */
export const PROBE_TIMEOUT_MS = 1500

/** The subdomains probed. */
export const ADDRESS_NAMES = ['p1', 'p2', 'p3'] as const

type ChoiceStorage = Pick<Storage, 'getItem' | 'setItem'>

export interface AddressChoiceOptions {
  /** The page's location. */
  location: Pick<Location, 'hostname' | 'origin'>
  /** The project domain the build embeds; '' in development builds. */
  domain: string
  storage: ChoiceStorage | undefined
  fetch?: typeof fetch
  now?: () => number
  timeoutMs?: number
  /** The origins to probe; by default `https://pN.<domain>`. */
  candidates?: string[]
}

/** True when the page is on the project domain itself, in a built deployment (never on localhost or an IP). */
export function onProjectDomain(location: Pick<Location, 'hostname'>, domain: string): boolean {
  return domain !== '' && location.hostname === domain
}

/** The origins probed for a domain: `https://p1.<domain>` … `https://p3.<domain>`. */
export function candidateOrigins(domain: string): string[] {
  return ADDRESS_NAMES.map((name) => `https://${name}.${domain}`)
}

/**
 * Resolves with the origin once its health endpoint answers, or rejects when it fails or takes
 * longer than `timeoutMs`. The request is `no-cors`: only that the gateway answered matters, so
 * the gateways need no CORS rule for the project domain (an opaque answer counts; a readable one
 * must be 2xx).
 */
export async function probe(origin: string, send: typeof fetch, timeoutMs: number): Promise<string> {
  const response = await send(`${origin}/auth/v1/health`, {
    mode: 'no-cors',
    cache: 'no-store',
    credentials: 'omit',
    signal: AbortSignal.timeout(timeoutMs),
  })
  if (response.type !== 'opaque' && !response.ok) throw new Error(`${origin} answered ${response.status}`)
  return origin
}

/** The fastest origin to answer, or undefined when none answers within `timeoutMs`. */
export async function fastestOrigin(origins: string[], send: typeof fetch, timeoutMs: number) {
  if (origins.length === 0) return undefined
  try {
    return await Promise.any(origins.map((origin) => probe(origin, send, timeoutMs)))
  } catch {
    return undefined
  }
}

function remembered(storage: ChoiceStorage | undefined, now: number): string | undefined {
  try {
    const value: unknown = JSON.parse(storage?.getItem(ADDRESS_KEY) ?? 'null')
    if (typeof value !== 'object' || value === null) return undefined
    const { origin, expires } = value as { origin?: unknown; expires?: unknown }
    return typeof origin === 'string' && typeof expires === 'number' && expires > now ? origin : undefined
  } catch {
    return undefined
  }
}

/** Keeps `origin` as the chosen address for ADDRESS_KEPT_MS from `now`. */
function rememberAddress(storage: Pick<Storage, 'setItem'> | undefined, origin: string, now: number): void {
  try {
    storage?.setItem(ADDRESS_KEY, JSON.stringify({ origin, expires: now + ADDRESS_KEPT_MS }))
  } catch {
    // Storage refused (private mode, quota): the next load probes again.
  }
}

/**
 * The origin the page should move to, or undefined to stay. Only a page on the project domain
 * itself moves: to the remembered address while it is fresh and still answers, else to the fastest
 * of the candidates (remembered for ADDRESS_KEPT_MS). When none answers, the page stays.
 */
export async function chooseAddress(options: AddressChoiceOptions): Promise<string | undefined> {
  const { location, domain, storage } = options
  if (!onProjectDomain(location, domain)) return undefined
  const send = options.fetch ?? ((...args) => fetch(...args))
  const now = options.now ?? Date.now
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS
  const kept = remembered(storage, now())
  if (kept !== undefined && (await fastestOrigin([kept], send, timeoutMs)) === kept) return kept
  const fastest = await fastestOrigin(options.candidates ?? candidateOrigins(domain), send, timeoutMs)
  if (fastest !== undefined) rememberAddress(storage, fastest, now())
  return fastest === location.origin ? undefined : fastest
}
