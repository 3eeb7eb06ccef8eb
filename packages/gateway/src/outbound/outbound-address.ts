import { lookup as dnsLookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'

/** Resolves a host name to all its addresses, as `dns.promises.lookup` with `all: true` does. */
export type ResolveHost = (hostname: string) => Promise<{ address: string; family: number }[]>

const resolveWithSystem: ResolveHost = (hostname) => dnsLookup(hostname, { all: true, verbatim: true })

/** A user-chosen address the gateway will not contact. */
export class OutboundRefused extends Error {
  override name = 'OutboundRefused'
}

/** IPv4 ranges never reached from a user-chosen URL, with the name a refusal gives. */
const IPV4_RANGES: [string, number, string][] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
]

const IPV6_RANGES: [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'private (unique local)'],
  ['fe80::', 10, 'link-local'],
  ['ff00::', 8, 'multicast'],
]

const ranges = new Map<string, BlockList>()
for (const [network, prefix, name] of IPV4_RANGES) addRange(name, network, prefix, 'ipv4')
for (const [network, prefix, name] of IPV6_RANGES) addRange(name, network, prefix, 'ipv6')

function addRange(name: string, network: string, prefix: number, type: 'ipv4' | 'ipv6') {
  let list = ranges.get(name)
  if (!list) {
    list = new BlockList()
    ranges.set(name, list)
  }
  list.addSubnet(network, prefix, type)
}

/** The eight 16-bit groups of an IPv6 address (with or without a dotted IPv4 tail). */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase()
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const bytes = dotted[1]!.split('.').map(Number)
    const tail = `${((bytes[0]! << 8) | bytes[1]!).toString(16)}:${((bytes[2]! << 8) | bytes[3]!).toString(16)}`
    text = text.slice(0, dotted.index) + tail
  }
  const [head, rest] = text.split('::')
  const left = head ? head.split(':') : []
  const right = rest ? rest.split(':') : []
  const missing = 8 - left.length - right.length
  if (rest === undefined ? missing !== 0 : missing < 0) return undefined
  return [...left, ...Array(rest === undefined ? 0 : missing).fill('0'), ...right].map((group) =>
    Number.parseInt(group, 16),
  )
}

/** The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible or NAT64 IPv6 address. */
function embeddedIpv4(address: string): string | undefined {
  const groups = ipv6Groups(address)
  if (!groups) return undefined
  const zeroHead = groups.slice(0, 5).every((group) => group === 0)
  const mapped = zeroHead && groups[5] === 0xffff
  const compatible = zeroHead && groups[5] === 0 && (groups[6]! !== 0 || groups[7]! > 1)
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0)
  if (!mapped && !compatible && !nat64) return undefined
  return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.')
}

/**
 * Why an IP address may not be contacted from a user-chosen URL (`loopback`, `private`,
 * `link-local` …), or undefined for a public address. An IPv6 address that carries an IPv4 address
 * is judged by that IPv4 address.
 */
export function refusedRange(scoped: string): string | undefined {
  // A zone (`fe80::1%eth0`) names an interface, not part of the address.
  const address = scoped.split('%')[0]!
  const family = isIP(address)
  if (family === 0) return 'not an IP address'
  if (family === 6) {
    const inner = embeddedIpv4(address)
    if (inner !== undefined) return refusedRange(inner)
  }
  const type = family === 4 ? 'ipv4' : 'ipv6'
  for (const [name, list] of ranges) if (list.check(address, type)) return name
  return undefined
}

/** Names that mean this machine whatever DNS says (RFC 6761 §6.3, and the usual /etc/hosts aliases). */
const LOOPBACK_NAMES = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback'])

/**
 * A host in its one canonical form, or undefined when it is no valid host: brackets and an IPv6
 * zone removed, lowercase, trailing dots removed (`localhost.` is `localhost`), and address
 * literals written the one way the URL parser writes them, so every IPv4 form (`127.1`,
 * `0x7f.0.0.1`, `2130706433`, `0177.0.0.1`) and IPv6 form (`[0:0::1]`, `[::ffff:127.0.0.1]`)
 * meets the same ranges.
 */
export function normalizeHost(hostname: string): string | undefined {
  let host = hostname.toLowerCase()
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1)
  if (isIP(host.split('%')[0]!) === 6) host = host.split('%')[0]!
  else host = host.replace(/\.+$/, '')
  if (host === '') return undefined
  const parsed = URL.parse(`http://${isIP(host) === 6 ? `[${host}]` : host}/`)
  if (!parsed || parsed.hostname === '') return undefined
  const canonical = parsed.hostname.replace(/\.+$/, '')
  return canonical.startsWith('[') ? canonical.slice(1, -1) : canonical
}

/**
 * Why a user-chosen host may not be contacted, judged from its name alone (before any DNS
 * lookup), or undefined when only its resolved addresses can tell: not a valid host, a name of
 * this machine (`localhost` and below it, in any case, with trailing dots), a single-label name
 * (reached through the local resolver's search domains), or an internal address in any form.
 */
export function refusedHost(hostname: string): string | undefined {
  const host = normalizeHost(hostname)
  if (host === undefined) return 'not a valid host'
  if (isIP(host) !== 0) return refusedRange(host)
  if (LOOPBACK_NAMES.has(host) || host.endsWith('.localhost')) return 'loopback'
  if (!host.includes('.')) return 'single-label (local network)'
  return undefined
}

/**
 * Resolves the host of a user-chosen URL and checks every address it has: when any of them is
 * loopback, private or link-local the whole host is refused (unless `allowPrivate`), so a name
 * with one public and one internal address cannot be used to reach inside. Returns the address to
 * connect to; the caller connects to exactly it, so a second, different DNS answer (DNS
 * rebinding) never comes into play.
 */
export async function resolveOutbound(
  hostname: string,
  {
    allowPrivate,
    resolve = resolveWithSystem,
    allowSetting,
  }: {
    allowPrivate: boolean
    resolve?: ResolveHost
    /** The setting that would allow internal addresses, named in the refusal. */
    allowSetting?: string
  },
): Promise<{ address: string; family: number }> {
  const host = normalizeHost(hostname)
  if (host === undefined) throw new OutboundRefused(`${hostname} is not a valid host; refused`)
  const family = isIP(host)
  // Names are judged before any lookup; address literals (canonical now) by their range below.
  const named = allowPrivate || family !== 0 ? undefined : refusedHost(host)
  if (named !== undefined) {
    throw new OutboundRefused(`${host} is a ${named} name; refused${allowSetting ? ` (${allowSetting} is off)` : ''}`)
  }
  let addresses: { address: string; family: number }[]
  if (family !== 0) addresses = [{ address: host, family }]
  else {
    try {
      addresses = await resolve(host)
    } catch (error) {
      throw new Error(`cannot resolve ${host}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
    }
    if (addresses.length === 0) throw new Error(`cannot resolve ${host}: no addresses`)
  }
  if (!allowPrivate) {
    for (const { address } of addresses) {
      const range = refusedRange(address)
      if (range !== undefined) {
        throw new OutboundRefused(
          `${host} resolves to ${address}, a ${range} address; refused${allowSetting ? ` (${allowSetting} is off)` : ''}`,
        )
      }
    }
  }
  return addresses[0]!
}
