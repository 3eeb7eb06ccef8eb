/**
 * Leaving a gateway that went away (spec "Platform rules"; docs/web-client.md, "Several gateways").
 * A page on a pN address of a built deployment follows its live stream: once the stream has been
 * down (or still connecting) for DOWN_MS, the page asks its own gateway's health endpoint, and when that fails
 * OWN_FAILURES times in a row it probes the other pN addresses as the first choice does
 * (address-choice.ts) and moves the whole page to the fastest, to the same path, query and hash.
 * (Nothing is remembered: local storage belongs to each origin, and only the project domain's page
 * reads the remembered address.) With the gateways' Sessions.CookieDomain the browser sends the
 * session cookie there too, so the person stays signed in; without it they see sign-in. While no
 * address answers, the page asks again after a growing pause. Nothing moves in development (no
 * domain built in, localhost or an IP address) or on the project domain itself.
 */

import { backoffMs, type LiveStatus } from '../live-events.ts'
import { ADDRESS_NAMES, candidateOrigins, fastestOrigin, PROBE_TIMEOUT_MS, probe } from './address-choice.ts'

/** How long the live stream is down before the page asks whether its own gateway is still there. */
export const DOWN_MS = 3000

/** Failed probes of the page's own gateway, one after another, before it looks elsewhere. */
export const OWN_FAILURES = 2

/** The pause between checks: from `minMs`, doubling with jitter up to `maxMs`. */
export const CHECK_RETRY = { minMs: 2000, maxMs: 60_000 }

/** True when the page is on `p1.<domain>`, `p2` or `p3` of a built deployment. */
export function onGatewayAddress(location: Pick<Location, 'hostname'>, domain: string): boolean {
  return domain !== '' && ADDRESS_NAMES.some((name) => location.hostname === `${name}.${domain}`)
}

export interface AddressMoveOptions {
  /** The page's location; `replace` moves the page. */
  location: Pick<Location, 'hostname' | 'origin' | 'pathname' | 'search' | 'hash' | 'replace'>
  /** The project domain the build embeds; '' in development builds. */
  domain: string
  fetch?: typeof fetch
  timeoutMs?: number
  /** The origins a page may move to (its own is left out); by default `https://pN.<domain>`. */
  candidates?: string[]
  downMs?: number
  retry?: { minMs: number; maxMs: number }
}

/** Watches one page's live stream for a gateway that went away. */
export interface AddressMove {
  /**
   * Takes each status of the live stream: `offline` or `connecting` starts the watch (once; a
   * connection attempt to a gateway that vanished can hang without an error), `live` ends it.
   */
  status(status: LiveStatus): void
  /** Stops for good. */
  close(): void
}

const NOT_WATCHING: AddressMove = { status() {}, close() {} }

/** Watches the page's gateway through its live stream's status (see above); a no-op off a pN address. */
export function watchAddress(options: AddressMoveOptions): AddressMove {
  const { location, domain } = options
  if (!onGatewayAddress(location, domain)) return NOT_WATCHING
  const send = options.fetch ?? ((...args) => fetch(...args))
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS
  const retry = options.retry ?? CHECK_RETRY
  const own = location.origin
  const others = (options.candidates ?? candidateOrigins(domain)).filter((origin) => origin !== own)
  let timer: ReturnType<typeof setTimeout> | undefined
  // Each watch has a number, so a check still under way when the stream came back is dropped.
  let watch = 0
  let watching = false
  let closed = false
  let checks = 0
  let ownFailures = 0

  const answers = (origin: string) =>
    probe(origin, send, timeoutMs).then(
      () => true,
      () => false,
    )

  async function check(current: number) {
    const ownAnswers = await answers(own)
    if (current !== watch) return
    ownFailures = ownAnswers ? 0 : ownFailures + 1
    if (ownFailures >= OWN_FAILURES) {
      const next = await fastestOrigin(others, send, timeoutMs)
      if (current !== watch) return
      if (next !== undefined) {
        location.replace(`${next}${location.pathname}${location.search}${location.hash}`)
        return
      }
    }
    checks++
    timer = setTimeout(() => check(current), backoffMs(checks, retry))
  }

  function stop() {
    watch++
    watching = false
    checks = 0
    ownFailures = 0
    clearTimeout(timer)
  }

  return {
    status(status) {
      if (status === 'live') stop()
      else if (!watching && !closed) {
        watching = true
        const current = watch
        timer = setTimeout(() => check(current), options.downMs ?? DOWN_MS)
      }
    },
    close() {
      closed = true
      stop()
    },
  }
}
