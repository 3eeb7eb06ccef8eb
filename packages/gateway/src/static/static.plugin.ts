import { ApiError } from '@atrium/platform'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { extensionOf } from './content-types.ts'
import type { Frontend, LoadedFrontends, StaticFile, Variant } from './frontends.ts'

export interface StaticPluginOptions {
  /** The frontends read into memory at start (`loadFrontends`). */
  loaded: LoadedFrontends
}

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
function createNegotiator() {
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

type Negotiate = ReturnType<typeof createNegotiator>

/** If-None-Match uses the weak comparison: `W/` prefixes are ignored (RFC 9110 §13.1.2). */
function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false
  for (const candidate of ifNoneMatch.split(',')) {
    const tag = candidate.trim()
    if (tag === '*' || tag === etag || (tag.startsWith('W/') && tag.slice(2) === etag)) return true
  }
  return false
}

function sendFile(negotiate: Negotiate, request: FastifyRequest, reply: FastifyReply, file: StaticFile) {
  const [variant, encoding] = negotiate(file, request.headers['accept-encoding'])
  reply.header('etag', variant.etag).header('cache-control', file.cacheControl)
  if (file.br || file.gzip) reply.header('vary', 'Accept-Encoding')
  if (matchesEtag(request.headers['if-none-match'], variant.etag)) return reply.code(304).send()
  if (encoding) reply.header('content-encoding', encoding)
  return reply.header('content-type', file.contentType).header('x-content-type-options', 'nosniff').send(variant.body)
}

function routeFrontend(app: FastifyInstance, { mount, files }: Frontend, negotiate: Negotiate) {
  const index = files.get('index.html')
  const routeOptions = { config: { envelope: false }, schema: { hide: true } }

  // `/chat` → `/chat/`, keeping the query (`/chat?code=<invite_code>` is a guest invite link).
  app.get(mount.slice(0, -1), routeOptions, async (request, reply) => {
    const query = request.url.indexOf('?')
    return reply.redirect(query === -1 ? mount : mount + request.url.slice(query), 301)
  })

  // Paths are only ever looked up in the in-memory map built from the directory listing, so no
  // request path (`..`, `%2e%2e`, backslashes) can reach a file outside the build.
  app.get(`${mount}*`, routeOptions, async (request, reply) => {
    const path = (request.params as { '*': string })['*']
    const file = files.get(path === '' || path.endsWith('/') ? `${path}index.html` : path)
    if (file) return sendFile(negotiate, request, reply, file)
    // A client-side route (`/chat/c/42`) has no extension and gets the app's index.html; a
    // missing asset (`/chat/assets/gone.js`) is an error, not HTML the browser would run as code.
    if (index && extensionOf(path) === '') return sendFile(negotiate, request, reply, index)
    throw new ApiError('NotFound', `No file ${mount}${path}`)
  })
}

/**
 * Serves each frontend from memory under its mount: Content-Type, strong ETags with 304s,
 * br/gzip negotiation, long immutable caching for hashed asset names and revalidation for the
 * rest, the SPA fallback to index.html, and a redirect from the mount without its slash.
 */
export default async function staticPlugin(app: FastifyInstance, { loaded }: StaticPluginOptions) {
  for (const { mount, directory } of loaded.skipped) {
    app.log.warn({ mount, directory }, 'static frontend directory not found; mount skipped')
  }
  const negotiate = createNegotiator()
  for (const frontend of loaded.frontends) {
    app.log.info({ mount: frontend.mount, files: frontend.files.size, bytes: frontend.bytes }, 'static frontend loaded')
    routeFrontend(app, frontend, negotiate)
  }
}
