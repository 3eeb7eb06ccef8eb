import { crc32 } from 'node:zlib'
import { ApiError } from '@atrium/platform'

/** What the client sent of one chunk, known once the storage has consumed `bytes`. */
export interface ChunkBody {
  /** The body as the storage reads it: at most `limit` bytes, CRC32 computed on the way. */
  bytes: AsyncIterable<Uint8Array>
  /** CRC32 of everything yielded so far. */
  readonly crc32: number
  /** True when the client stopped sending before the end of the body (a dropped connection). */
  readonly interrupted: boolean
}

/**
 * Streams a PATCH body to the storage without holding it: each piece is counted against `limit`
 * (more answers UploadTooLarge, and the storage drops the chunk) and folded into the CRC32. A body
 * that breaks off ends the stream early with `interrupted` set, so the caller decides what to keep.
 */
export function readChunkBody(source: AsyncIterable<Uint8Array> | undefined, limit: number): ChunkBody {
  let checksum = 0
  let interrupted = false
  async function* bytes() {
    if (source === undefined) return
    let received = 0
    const iterator = source[Symbol.asyncIterator]()
    while (true) {
      let next: IteratorResult<Uint8Array>
      try {
        next = await iterator.next()
      } catch {
        interrupted = true
        return
      }
      if (next.done) return
      received += next.value.length
      if (received > limit) throw new ApiError('UploadTooLarge', `the chunk exceeds ${limit} bytes`)
      checksum = crc32(next.value, checksum)
      yield next.value
    }
  }
  return {
    bytes: bytes(),
    get crc32() {
      return checksum
    },
    get interrupted() {
      return interrupted
    },
  }
}
