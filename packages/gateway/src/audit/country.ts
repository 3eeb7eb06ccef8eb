import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { BlockList, isIPv4, isIPv6 } from 'node:net'
import { fileURLToPath } from 'node:url'

// Data: @ip-location-db/geo-whois-asn-country (GeoFeed + RIR whois + ASN; country codes, NRO data under
// CC BY 4.0 — attribution to nro.net). Rows are inclusive ranges sorted by start; some broad ranges are
// followed by narrower ranges inside them, and the narrower (more specific) entry wins.
const DATA_PACKAGE = '@ip-location-db/geo-whois-asn-country'
const TABLES = { ipv4: 'geo-whois-asn-country-ipv4.csv', ipv6: 'geo-whois-asn-country-ipv6.csv' }

/**
 * The data files a built gateway carries in `ip-country/` next to its bundle (scripts/build.ts copies
 * them from these paths); an unbuilt checkout reads them from the installed package.
 */
export const COUNTRY_DATA = {
  dir: 'ip-country',
  files: [TABLES.ipv4, TABLES.ipv6, 'NRO_LICENSE'].map((file) => `${DATA_PACKAGE}/${file}`),
}

function dataPath(file: string): string {
  const bundled = new URL(`./${COUNTRY_DATA.dir}/${file}`, import.meta.url)
  return existsSync(bundled) ? fileURLToPath(bundled) : fileURLToPath(import.meta.resolve(`${DATA_PACKAGE}/${file}`))
}

/** Addresses that never belong to a country: private, loopback, link-local, shared, documentation, multicast. */
const reserved = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3],
] as const) {
  reserved.addSubnet(network, prefix, 'ipv4')
}
for (const [network, prefix] of [
  ['::', 127],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
] as const) {
  reserved.addSubnet(network, prefix, 'ipv6')
}

const NEWLINE = 10
const COMMA = 44
const COLON = 58

/**
 * Ranges sorted by start in typed arrays. A bound is `width` 32-bit words, most significant first
 * (1 for IPv4, 4 for IPv6). `parents[i]` is the nearest earlier range still open when range i starts:
 * following it from the last range starting at or before an address visits every candidate that may
 * contain the address, innermost first.
 */
interface Table {
  width: number
  starts: Uint32Array
  ends: Uint32Array
  codes: Uint16Array
  parents: Int32Array
}

/** Compares the bound at `index` with the address `words`: negative, zero or positive. */
function compareBound(bounds: Uint32Array, width: number, index: number, words: Uint32Array): number {
  for (let w = 0; w < width; w++) {
    const difference = bounds[index * width + w]! - words[w]!
    if (difference !== 0) return difference
  }
  return 0
}

/** Parses `a.b.c.d` between two offsets of a byte buffer into one word; false when malformed. */
function parseIPv4Bytes(bytes: Uint8Array, from: number, to: number, out: Uint32Array, at: number): boolean {
  let value = 0
  let part = 0
  let digits = 0
  let dots = 0
  for (let i = from; i < to; i++) {
    const c = bytes[i]!
    if (c === 46) {
      if (digits === 0 || part > 255) return false
      value = value * 256 + part
      part = 0
      digits = 0
      dots++
    } else if (c >= 48 && c <= 57 && digits < 3) {
      part = part * 10 + c - 48
      digits++
    } else return false
  }
  if (dots !== 3 || digits === 0 || part > 255) return false
  out[at] = value * 256 + part
  return true
}

/** Parses an IPv6 address in hex form (with optional `::`) into four words; false when malformed. */
function parseIPv6Bytes(bytes: Uint8Array, from: number, to: number, out: Uint32Array, at: number): boolean {
  const groups = [0, 0, 0, 0, 0, 0, 0, 0]
  let count = 0
  let gap = -1
  let group = 0
  let digits = 0
  for (let i = from; i < to; i++) {
    const c = bytes[i]!
    if (c === COLON) {
      const double = i + 1 < to && bytes[i + 1] === COLON
      if (digits > 0) {
        if (count === 8) return false
        groups[count++] = group
      } else if (!double || i !== from) return false
      if (double) {
        if (gap !== -1) return false
        gap = count
        i++
      } else if (i + 1 === to) return false
      group = 0
      digits = 0
      continue
    }
    const nibble = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1
    if (nibble < 0 || digits === 4) return false
    group = group * 16 + nibble
    digits++
  }
  if (digits > 0) {
    if (count === 8) return false
    groups[count++] = group
  }
  if (gap === -1 ? count !== 8 : count > 7) return false
  if (gap !== -1) {
    const missing = 8 - count
    for (let g = count - 1; g >= gap; g--) groups[g + missing] = groups[g]!
    for (let g = gap; g < gap + missing; g++) groups[g] = 0
  }
  for (let w = 0; w < 4; w++) out[at + w] = groups[w * 2]! * 65536 + groups[w * 2 + 1]!
  return true
}

/** Reads one CSV of address ranges (`start,end,CC`) into a table. */
async function readTable(file: string, width: number): Promise<Table> {
  const bytes = await readFile(dataPath(file))
  let lines = 0
  for (let i = bytes.indexOf(NEWLINE); i !== -1; i = bytes.indexOf(NEWLINE, i + 1)) lines++
  const parse = width === 1 ? parseIPv4Bytes : parseIPv6Bytes
  const starts = new Uint32Array((lines + 1) * width)
  const ends = new Uint32Array((lines + 1) * width)
  const codes = new Uint16Array(lines + 1)
  let count = 0
  for (let lineStart = 0; lineStart < bytes.length; ) {
    let lineEnd = bytes.indexOf(NEWLINE, lineStart)
    if (lineEnd === -1) lineEnd = bytes.length
    const first = bytes.indexOf(COMMA, lineStart)
    const second = first === -1 ? -1 : bytes.indexOf(COMMA, first + 1)
    if (
      first > lineStart &&
      second > first &&
      second + 2 < lineEnd + 1 &&
      parse(bytes, lineStart, first, starts, count * width) &&
      parse(bytes, first + 1, second, ends, count * width)
    ) {
      codes[count++] = (bytes[second + 1]! << 8) | bytes[second + 2]!
    }
    lineStart = lineEnd + 1
  }
  return { width, ...linkParents(width, starts, ends, count), codes: codes.subarray(0, count) }
}

/** Shrinks the columns to `count` rows and finds each range's parent with a stack of open ranges. */
function linkParents(width: number, starts: Uint32Array, ends: Uint32Array, count: number) {
  const parents = new Int32Array(count)
  const open: number[] = []
  const start = new Uint32Array(width)
  for (let i = 0; i < count; i++) {
    start.set(starts.subarray(i * width, i * width + width))
    while (open.length > 0 && compareBound(ends, width, open.at(-1)!, start) < 0) open.pop()
    parents[i] = open.at(-1) ?? -1
    open.push(i)
  }
  return { starts: starts.subarray(0, count * width), ends: ends.subarray(0, count * width), parents }
}

/** The country of the innermost range containing `words`, or ''. */
function find(table: Table, words: Uint32Array): string {
  const { width, starts, ends, codes, parents } = table
  let low = 0
  let high = codes.length - 1
  let index = -1
  while (low <= high) {
    const mid = (low + high) >>> 1
    if (compareBound(starts, width, mid, words) <= 0) {
      index = mid
      low = mid + 1
    } else high = mid - 1
  }
  while (index >= 0 && compareBound(ends, width, index, words) < 0) index = parents[index]!
  return index >= 0 ? String.fromCharCode(codes[index]! >> 8, codes[index]! & 0xff) : ''
}

let loading: Promise<(ip: string) => string> | undefined

/**
 * Loads the IP-to-country table once per process (later calls share it) and returns a lookup that
 * answers an ISO 3166-1 alpha-2 code in upper case, or '' for unknown, reserved or malformed addresses.
 */
export async function loadCountryLookup(): Promise<(ip: string) => string> {
  loading ??= buildLookup()
  return loading
}

async function buildLookup(): Promise<(ip: string) => string> {
  const [v4, v6] = await Promise.all([readTable(TABLES.ipv4, 1), readTable(TABLES.ipv6, 4)])
  const words = new Uint32Array(4)

  return function lookupCountry(ip: string): string {
    if (typeof ip !== 'string' || ip.length > 64) return ''
    const isV4 = isIPv4(ip)
    if (!isV4 && (!isIPv6(ip) || ip.includes('%'))) return ''
    if (reserved.check(ip, isV4 ? 'ipv4' : 'ipv6')) return ''
    const bytes = Buffer.from(ip, 'latin1')
    if (isV4) return parseIPv4Bytes(bytes, 0, bytes.length, words, 0) ? find(v4, words) : ''
    const lastColon = bytes.lastIndexOf(COLON)
    const dotted = bytes.includes(46)
    // An embedded IPv4 tail (::ffff:1.2.3.4) takes the last two groups.
    const ok = dotted
      ? parseIPv6Bytes(Buffer.from(`${ip.slice(0, lastColon + 1)}0:0`, 'latin1'), 0, lastColon + 4, words, 0) &&
        parseIPv4Bytes(bytes, lastColon + 1, bytes.length, words, 3)
      : parseIPv6Bytes(bytes, 0, bytes.length, words, 0)
    if (!ok) return ''
    // IPv4-mapped (::ffff:a.b.c.d) answers as the IPv4 address it carries.
    if (words[0] === 0 && words[1] === 0 && words[2] === 0xffff) {
      words[0] = words[3]!
      return reserved.check(ipv4Text(words[0]), 'ipv4') ? '' : find(v4, words)
    }
    return find(v6, words)
  }
}

function ipv4Text(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`
}
