import type { ReplyView, RequestView } from '@atrium/platform'
import type { StaticFile, Variant } from './frontends.ts'

const ACCEPTS_BR = 1
const ACCEPTS_GZIP = 2

/** The codings an Accept-Encoding value allows, as ACCEPTS_* bits (RFC 9110 §12.5.3: q=0 refuses). */
function parseAcceptEncoding(header: string): number {
  const weights = new Map<string, number>()
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.split(';')
    let weight = 1
    for (const param of params) {
      const [key, value] = param.split('=')
      if (key?.trim().toLowerCase() === 'q') weight = Number(value) || 0
    }
    weights.set(name.trim().toLowerCase(), weight)
  }
  const any = weights.get('*') ?? 0
  const br = (weights.get('br') ?? any) > 0 ? ACCEPTS_BR : 0
  const gzip = (weights.get('gzip') ?? weights.get('x-gzip') ?? any) > 0 ? ACCEPTS_GZIP : 0
  return br | gzip
}

/**
 * Picks the variant the client accepts, preferring br, then gzip, then the original. Browsers
 * send the same Accept-Encoding on every request, so the last value parsed is kept.
 */
export function createNegotiator() {
  let lastHeader = ''
  let lastAccepts = 0
  return function negotiate(file: StaticFile, acceptEncoding: string | undefined): [Variant, string | undefined] {
    if (!acceptEncoding || (!file.br && !file.gzip)) return [file.identity, undefined]
    if (acceptEncoding !== lastHeader) {
      lastAccepts = parseAcceptEncoding(acceptEncoding)
      lastHeader = acceptEncoding
    }
    if (file.br && lastAccepts & ACCEPTS_BR) return [file.br, 'br']
    if (file.gzip && lastAccepts & ACCEPTS_GZIP) return [file.gzip, 'gzip']
    return [file.identity, undefined]
  }
}

export type Negotiate = ReturnType<typeof createNegotiator>

/** If-None-Match uses the weak comparison: `W/` prefixes are ignored (RFC 9110 §13.1.2). */
function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false
  for (const candidate of ifNoneMatch.split(',')) {
    const tag = candidate.trim()
    if (tag === '*' || tag === etag || (tag.startsWith('W/') && tag.slice(2) === etag)) return true
  }
  return false
}

/** Answers with one in-memory file: the accepted encoding, its ETag, a 304 when the client holds it. */
export function sendFile<R extends ReplyView>(
  negotiate: Negotiate,
  request: RequestView,
  reply: R,
  file: StaticFile,
): R {
  const [variant, encoding] = negotiate(file, request.headers['accept-encoding'])
  reply.header('etag', variant.etag).header('cache-control', file.cacheControl)
  if (file.br || file.gzip) reply.header('vary', 'Accept-Encoding')
  if (matchesEtag(request.headers['if-none-match'], variant.etag)) {
    reply.code(304).send()
    return reply
  }
  if (encoding) reply.header('content-encoding', encoding)
  reply.header('content-type', file.contentType).header('x-content-type-options', 'nosniff').send(variant.body)
  return reply
}
