import { ApiError, type ReplyView, type RequestView } from '@atrium/platform'
import type { FastifyInstance } from 'fastify'
import { type Admission, whenAdmitted } from '../server/admission.ts'
import { extensionOf } from './content-types.ts'
import { type FrontendPolicySettings, frontendHeaders } from './frontend-policy.ts'
import type { Frontend, LoadedFrontends } from './frontends.ts'
import { createNegotiator, type Negotiate, sendFile } from './send-file.ts'

export interface StaticPluginOptions {
  /** The frontends read into memory at start (`loadFrontends`). */
  loaded: LoadedFrontends
  /** The gateway's request checks, which the front door runs for the files it serves. */
  admission: Admission
  /** What each frontend's security headers depend on (frontend-policy.ts). */
  policy: FrontendPolicySettings
}

function routeFrontend(
  app: FastifyInstance,
  { mount, files }: Frontend,
  headers: Record<string, string>,
  negotiate: Negotiate,
  admission: Admission,
) {
  const index = files.get('index.html')
  const routeOptions = { config: { envelope: false }, schema: { hide: true } }

  // Paths are only ever looked up in the in-memory map built from the directory listing, so no
  // request path (`..`, `%2e%2e`, backslashes) can reach a file outside the build.
  function serve(path: string, request: RequestView, reply: ReplyView) {
    reply.headers(headers)
    const file = files.get(path === '' || path.endsWith('/') ? `${path}index.html` : path)
    if (file) return sendFile(negotiate, request, reply, file)
    // A client-side route (`/chat/c/42`) has no extension and gets the app's index.html; a
    // missing asset (`/chat/assets/gone.js`) is an error, not HTML the browser would run as code.
    if (index && extensionOf(path) === '') return sendFile(negotiate, request, reply, index)
    throw new ApiError('NotFound', `No file ${mount}${path}`)
  }

  // `/chat` → `/chat/`, keeping the query (`/chat?code=<invite_code>` is a guest invite link).
  app.get(mount.slice(0, -1), routeOptions, async (request, reply) => {
    const query = request.url.indexOf('?')
    return reply.redirect(query === -1 ? mount : mount + request.url.slice(query), 301)
  })

  // Served at the front door, after the gateway's checks; Fastify's route serves `inject`.
  const frontDoor = `static:${mount}`
  app.frontDoor.handle(frontDoor, {
    answer(request, reply, params) {
      return whenAdmitted(admission.admit(request, reply, {}), () => serve(params['*'] ?? '', request, reply))
    },
  })
  app.get(`${mount}*`, { ...routeOptions, config: { envelope: false, frontDoor } }, async (request, reply) =>
    serve((request.params as { '*': string })['*'], request, reply),
  )
}

/**
 * Serves each frontend from memory under its mount: Content-Type, strong ETags with 304s,
 * br/gzip negotiation, long immutable caching for hashed asset names and revalidation for the
 * rest, the SPA fallback to index.html, a redirect from the mount without its slash, and each
 * frontend's security headers (CSP, Referrer-Policy, Permissions-Policy, HSTS under HTTPS).
 */
export default async function staticPlugin(app: FastifyInstance, { loaded, admission, policy }: StaticPluginOptions) {
  for (const { mount, directory } of loaded.skipped) {
    app.log.warn({ mount, directory }, 'static frontend directory not found; mount skipped')
  }
  const negotiate = createNegotiator()
  for (const frontend of loaded.frontends) {
    const headers = frontendHeaders(frontend, policy)
    const { mount, files, bytes } = frontend
    // The policy is logged, so an operator whose app breaks under it finds it beside the mount.
    const csp = headers['content-security-policy']
    app.log.info({ mount, files: files.size, bytes, csp }, 'static frontend loaded')
    routeFrontend(app, frontend, headers, negotiate, admission)
  }
}
