import type { FastifyReply, FastifyRequest } from 'fastify'
import { FAVICON_SVG, renderFaviconIco } from './favicon.ts'
import { type LoadedFrontends, loadStaticFile } from './frontends.ts'
import { createNegotiator, sendFile } from './send-file.ts'

/** Answers a request no route claims, or returns undefined to let it be NotFound. */
export type UnroutedAnswer = (request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined

// The icon changes only with a new release; a day keeps browsers from asking on every page.
const ICON_CACHE = 'public, max-age=86400'
// No script at all, and like every frontend never framed (frontend-policy.ts).
const PAGE_POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
}

function startPage({ skipped }: LoadedFrontends): string {
  const missing = skipped.map(
    ({ mount, directory }) =>
      `<li><code>${escapeHtml(mount)}</code>: <code>${escapeHtml(directory)}</code> is not built yet</li>`,
  )
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Atrium</title><link rel="icon" href="/favicon.svg" type="image/svg+xml">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1f2937}
h1{font-size:1.5rem}code{background:#f3f4f6;padding:0 .25rem;border-radius:.25rem}</style></head>
<body><h1>Atrium is running</h1>
<p>This gateway serves no web client${missing.length > 0 ? ':' : ' (the <code>Static.Apps</code> setting is empty).'}</p>
${missing.length > 0 ? `<ul>${missing.join('')}</ul>\n<p><code>npm start</code> builds the chat client; a gateway started otherwise needs <code>npm run build</code> and a restart.</p>` : ''}
<p>Health: <a href="/auth/v1/health">/auth/v1/health</a> · API: <a href="/auth/v1/openapi.json">/auth/v1/openapi.json</a></p>
</body></html>
`
}

/**
 * What the gateway answers at `/` and for its icon when the route map does not claim them
 * (issue 16, item 4): `/` redirects to the chat client (or the first frontend) when one is
 * mounted, else shows a small start page saying what to build; `/favicon.ico` and `/favicon.svg`
 * are the gateway's own icon.
 */
export async function createFrontPage(loaded: LoadedFrontends): Promise<UnroutedAnswer> {
  const client = loaded.frontends.find(({ mount }) => mount === '/chat/') ?? loaded.frontends[0]
  const [ico, svg, page] = await Promise.all([
    loadStaticFile('favicon.ico', renderFaviconIco()),
    loadStaticFile('favicon.svg', Buffer.from(FAVICON_SVG)),
    loadStaticFile('index.html', Buffer.from(startPage(loaded))),
  ])
  ico.cacheControl = ICON_CACHE
  svg.cacheControl = ICON_CACHE
  const negotiate = createNegotiator()

  return function answerUnrouted(request, reply) {
    if (request.method !== 'GET' && request.method !== 'HEAD') return undefined
    switch (request.target.path) {
      case '/':
        // 302, not 301: which client `/` leads to depends on the settings, so browsers must not remember it.
        if (client) return reply.redirect(client.mount, 302)
        reply.header('content-security-policy', PAGE_POLICY).header('referrer-policy', 'same-origin')
        return sendFile(negotiate, request, reply, page)
      case '/favicon.ico':
        return sendFile(negotiate, request, reply, ico)
      case '/favicon.svg':
        return sendFile(negotiate, request, reply, svg)
      default:
        return undefined
    }
  }
}
