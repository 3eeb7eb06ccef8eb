/** The CRC-32 table (IEEE 802.3, reflected polynomial 0xEDB88320), built once on first use. */
let table: Uint32Array | undefined

function crcTable(): Uint32Array {
  if (table) return table
  table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
}

/** The CRC-32 of `bytes` as an unsigned number, the value of Node's `zlib.crc32(bytes)`. */
export function crc32(bytes: Uint8Array): number {
  const t = crcTable()
  let crc = 0xffffffff
  for (let i = 0; i < bytes.length; i++) crc = t[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

/**
 * The tus checksum extension's value for `bytes` (docs/files.md, Chunks): `crc32 ` and the base64 of
 * the CRC-32 as 4 big-endian bytes, as the gateway checks it in Upload-Checksum.
 */
export function uploadChecksum(bytes: Uint8Array): string {
  const crc = crc32(bytes)
  const raw = String.fromCharCode(crc >>> 24, (crc >>> 16) & 0xff, (crc >>> 8) & 0xff, crc & 0xff)
  return `crc32 ${btoa(raw)}`
}
