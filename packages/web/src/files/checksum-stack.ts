import type { HttpRequest, HttpStack } from 'tus-js-client'
import { uploadChecksum } from './crc32.ts'

/**
 * tus-js-client's HTTP stack with what every upload request of the client carries: the headers of
 * `headers()` (the session's CSRF token, the device GUID) on each request, and on each chunk an
 * `Upload-Checksum` (docs/files.md, Chunks) computed from the chunk's bytes just before it is sent.
 * tus-js-client has no checksum option, hence the wrapper around its default stack.
 */
export function checksummingStack(inner: HttpStack, headers: () => Record<string, string>): HttpStack {
  return {
    getName: () => `checksumming ${inner.getName()}`,
    createRequest(method: string, url: string): HttpRequest {
      const request = inner.createRequest(method, url)
      for (const [name, value] of Object.entries(headers())) if (value) request.setHeader(name, value)
      const send = request.send.bind(request)
      const abort = request.abort.bind(request)
      let aborted = false
      request.abort = () => {
        aborted = true
        return abort()
      }
      request.send = async (body: unknown) => {
        const bytes = await chunkBytes(body)
        if (bytes) request.setHeader('Upload-Checksum', uploadChecksum(bytes))
        // Aborted while the chunk was being read (cancel, pause): nothing may be sent any more.
        if (aborted) throw new Error('tus: the request was aborted')
        return send(body)
      }
      return request
    },
  }
}

/** The bytes of a chunk body: a Blob slice in the browser, a Uint8Array (Buffer) in Node; else none. */
async function chunkBytes(body: unknown): Promise<Uint8Array | undefined> {
  if (body instanceof Uint8Array) return body
  if (typeof Blob !== 'undefined' && body instanceof Blob) return new Uint8Array(await body.arrayBuffer())
  return undefined
}
