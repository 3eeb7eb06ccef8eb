import { BlockList, isIP } from 'node:net'

/** The caller's address and the X-Forwarded-For chain to send on. */
export interface ClientAddress {
  /** The client's address: the direct peer, or from X-Forwarded-For when the peer is a trusted proxy. */
  ip: string
  /** The X-Forwarded-For value for the upstream: the trusted inbound chain plus the peer. */
  forwardedFor: string
  /** True when the direct peer is one of Proxy.TrustedProxies (its X-Forwarded-* headers are believed). */
  trustedPeer: boolean
}

/** `::ffff:1.2.3.4` (an IPv4 peer on a dual-stack socket) as `1.2.3.4`. */
function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address
}

/** Compiles Proxy.TrustedProxies (addresses and CIDR ranges) into a membership test; throws on a bad entry. */
export function createTrustedProxies(entries: readonly string[]): (address: string) => boolean {
  const list = new BlockList()
  for (const entry of entries) {
    const [network = '', bits] = entry.split('/')
    const family = isIP(network)
    if (family === 0) throw new Error(`Proxy.TrustedProxies: ${entry} is not an IP address or CIDR range`)
    const type = family === 4 ? 'ipv4' : 'ipv6'
    if (bits === undefined) {
      list.addAddress(network, type)
      continue
    }
    const prefix = Number(bits)
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) {
      throw new Error(`Proxy.TrustedProxies: ${entry} has an invalid prefix length`)
    }
    list.addSubnet(network, prefix, type)
  }
  if (entries.length === 0) return () => false
  return function isTrustedProxy(address) {
    const family = isIP(address)
    return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6')
  }
}

/**
 * Returns the function that tells a request's client address. An inbound X-Forwarded-For is kept
 * and read only when the direct peer is a trusted proxy; then the client is the right-most address
 * in the chain that is not itself a trusted proxy (the left part can be written by anyone).
 * From any other peer the header is discarded and the peer is the client.
 */
export function createClientAddress(trustedProxies: readonly string[]) {
  const isTrusted = createTrustedProxies(trustedProxies)
  return function clientAddress(peer: string | undefined, inbound: string | string[] | undefined): ClientAddress {
    const address = plainAddress(peer ?? '')
    if (!isTrusted(address) || inbound === undefined) {
      return { ip: address, forwardedFor: address, trustedPeer: isTrusted(address) }
    }
    const chain = (Array.isArray(inbound) ? inbound.join(',') : inbound)
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean)
    let ip = address
    for (let index = chain.length - 1; index >= 0; index--) {
      const hop = plainAddress(chain[index]!)
      if (isIP(hop) === 0) break
      ip = hop
      if (!isTrusted(hop)) break
    }
    return { ip, forwardedFor: [...chain, address].join(', '), trustedPeer: true }
  }
}

export type ClientAddressOf = ReturnType<typeof createClientAddress>
