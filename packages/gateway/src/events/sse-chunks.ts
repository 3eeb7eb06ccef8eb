/**
 * SSE frames kept as HTTP/1.1 chunks (RFC 9112 §7.1: the size in hex, CRLF, the frame, CRLF), so
 * that an event's chunk is made once and the same bytes go straight to the socket of every
 * HTTP/1.1 stream it reaches (issue 5). A response that frames its own body (HTTP/2, HTTP/1.0)
 * takes the frame inside the chunk.
 */

const LF = 0x0a

/** `frame` as one HTTP/1.1 chunk. */
export function toChunk(frame: string): Buffer {
  const size = Buffer.byteLength(frame)
  const sizeLine = `${size.toString(16)}\r\n`
  const chunk = Buffer.allocUnsafe(sizeLine.length + size + 2)
  chunk.write(sizeLine, 0, 'latin1')
  chunk.write(frame, sizeLine.length, 'utf8')
  chunk.write('\r\n', sizeLine.length + size, 'latin1')
  return chunk
}

/** The frame inside a chunk made by `toChunk`: a view of its bytes, not a copy. */
export function frameIn(chunk: Uint8Array): Uint8Array {
  return chunk.subarray(chunk.indexOf(LF) + 1, chunk.length - 2)
}
