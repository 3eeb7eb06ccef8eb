import { isIP } from 'node:net'

/**
 * The key a client address is budgeted under: an IPv4 address as it is (an IPv4-mapped IPv6
 * address as its IPv4 address), an IPv6 address by its /64 network, since one subscriber
 * usually holds a whole /64 and could otherwise take a fresh budget with every address in it.
 */
export function clientKey(ip: string): string {
  const address = ip.split('%')[0]!
  if (isIP(address) !== 6) return address
  // The URL parser writes an IPv6 address in its one canonical form (RFC 5952, dotted tails as hex).
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1)
  const [head = '', tail] = canonical.split('::')
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const groups = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
  if (groups.slice(0, 5).every((group) => group === '0') && groups[5] === 'ffff') {
    const [high, low] = [Number.parseInt(groups[6]!, 16), Number.parseInt(groups[7]!, 16)]
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.')
  }
  return `${groups.slice(0, 4).join(':')}::/64`
}
