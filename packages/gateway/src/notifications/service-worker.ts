import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'

/**
 * The one root service worker of the gateway origin (spec: "Web Push rules" 2). It shows the
 * notification a push carries (the PushMessage of push-messages.ts) and, on a click, focuses a
 * window already at the notification's URL, else takes a window of the same app (the first path
 * segment, e.g. /chat/) there and focuses it, else opens one. The URL must be a path on this origin;
 * anything else opens `/`. While a focused window already shows that URL, the push is not shown
 * again (the page has it through SSE).
 */
export const SERVICE_WORKER_SOURCE = `'use strict'
// Atrium service worker: Web Push notifications for this origin.

self.addEventListener('install', () => self.skipWaiting())
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()))

function samePath(url) {
  return typeof url === 'string' && url.startsWith('/') && !url.startsWith('//') && !url.startsWith('/\\\\') ? url : '/'
}

function readMessage(data) {
  if (!data) return {}
  try {
    const message = data.json()
    return message && typeof message === 'object' ? message : {}
  } catch {
    return { body: data.text() }
  }
}

self.addEventListener('push', (event) => {
  const message = readMessage(event.data)
  const url = new URL(samePath(message.url), self.location.origin).href
  const title = typeof message.title === 'string' && message.title ? message.title : 'Atrium'
  const options = {
    body: typeof message.body === 'string' ? message.body : '',
    data: { url },
  }
  if (typeof message.tag === 'string' && message.tag) {
    options.tag = message.tag
    options.renotify = true
  }
  event.waitUntil(
    self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((windows) => {
      if (windows.some((client) => client.focused && client.url === url)) return undefined
      return self.registration.showNotification(title, options)
    }),
  )
})

self.addEventListener('notificationclick', (event) => {
  event.notification.close()
  const data = event.notification.data || {}
  const target = new URL(typeof data.url === 'string' ? data.url : '/', self.location.origin)
  const url = target.origin === self.location.origin ? target.href : new URL('/', self.location.origin).href
  const openNew = () => (self.clients.openWindow ? self.clients.openWindow(url) : undefined)
  event.waitUntil(
    self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((windows) => {
      const open = windows.find((client) => client.url === url && 'focus' in client)
      if (open) return open.focus()
      // A tab of the same app (the messenger under /chat/) is taken to the target instead of a new tab.
      const app = appOf(url)
      const sibling = app && windows.find((client) => appOf(client.url) === app && 'navigate' in client)
      if (!sibling) return openNew()
      return sibling
        .navigate(url)
        .then((client) => (client ? client.focus() : openNew()))
        .catch(openNew)
    }),
  )
})

function appOf(url) {
  const { origin, pathname } = new URL(url)
  const first = /^[/][^/]+[/]/.exec(pathname)
  return origin === self.location.origin && first ? first[0] : undefined
}
`

const ETAG = `"${createHash('sha256').update(SERVICE_WORKER_SOURCE).digest('base64url').slice(0, 27)}"`

/**
 * `GET /sw.js`: the worker at the root of the origin, allowed to control all of it
 * (Service-Worker-Allowed: /). `no-cache` makes browsers revalidate it on every update check, so
 * a new gateway's worker is picked up at once; the ETag makes that check cheap.
 */
export default async function serviceWorkerPlugin(app: FastifyInstance) {
  app.get('/sw.js', { schema: { hide: true }, config: { envelope: false } }, async (request, reply) => {
    reply
      .header('cache-control', 'no-cache')
      .header('etag', ETAG)
      .header('service-worker-allowed', '/')
      .header('x-content-type-options', 'nosniff')
    if (request.headers['if-none-match'] === ETAG) return reply.code(304).send()
    return reply.header('content-type', 'text/javascript; charset=utf-8').send(SERVICE_WORKER_SOURCE)
  })
}
