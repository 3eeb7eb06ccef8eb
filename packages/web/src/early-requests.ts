/**
 * The requests of a page load that start before the client's script has arrived (issue 16: first
 * render under 300 ms). A classic inline script at the top of index.html (built from this module by
 * build-client.ts) runs while the HTML is parsed: it asks for the session and config.json at once
 * and, when this browser was signed in before (start-up.ts) and the path is the messenger, for the
 * chat list and the open chat's first page: at once when this path was opened before (its chat is
 * remembered), else as soon as the list holds the path's chat. The client's own first calls take
 * these answers instead of asking again (earlyFetch), so the round trips overlap the script's
 * download and evaluation instead of following them.
 */
import { deviceGuid } from './api/device.ts'
import { apiHeaders } from './api/request-headers.ts'
import { PAGE } from './chat/conversation/page-size.ts'
import { CONFIG_INIT } from './config/client-config.ts'
import { MOUNT, parseRoute } from './router/routes.ts'
import { localStorageOrNone, openedChat, probablySignedIn } from './start-up.ts'

/** Answers started early, by URL; each is taken at most once. */
export type EarlyRequests = Map<string, Promise<Response>>

declare global {
  interface Window {
    /** Set by the inline start-up script of index.html. */
    atriumEarly?: EarlyRequests
  }
}

/** The chat list as the client asks for it (ChatApi.getChatsWithHidden). */
export const CHAT_LIST_URL = '/msg/v1/get_chats?include_hidden=true'

/** How long an early answer may be taken; later calls ask afresh rather than show old data. */
export const EARLY_LIFETIME_MS = 10_000

interface EarlyEnvironment {
  storage: Storage | undefined
  location: { pathname: string; search: string }
  fetch: typeof fetch
}

/** Whether a get_chats answer lists the chat `chatId` (a peer's CRM id is not a chat id). */
function listsChat(body: unknown, chatId: string): boolean {
  const chats = (body as { result?: { chats?: Array<{ id?: unknown }> } } | undefined)?.result?.chats
  return Array.isArray(chats) && chats.some((chat) => chat.id === chatId)
}

/** Starts the page's first requests with the exact URLs and headers the client's calls will use. */
export function startEarlyRequests({ storage, location, fetch: send }: EarlyEnvironment): EarlyRequests {
  const early: EarlyRequests = new Map()
  const api: RequestInit = { method: 'GET', headers: apiHeaders(deviceGuid(storage)), credentials: 'same-origin' }
  function get(url: string, init: RequestInit): Promise<Response> {
    const response = send(url, init)
    response.catch(() => {}) // a failure nobody takes stays silent; the taker sees it
    early.set(url, response)
    return response
  }
  get('/auth/v1/session', api)
  get(`${MOUNT}config.json`, CONFIG_INIT)
  const route = parseRoute(location.pathname, location.search)
  if (!probablySignedIn(storage) || route.name !== 'messenger') return early
  const chats = get(CHAT_LIST_URL, api)
  const { chatId } = route
  if (!chatId) return early
  const firstPage = (id: string) => get(`/msg/v1/get_chat_messages?chat_id=${id}&limit=${PAGE}`, api)
  const known = openedChat(storage, chatId)
  if (known) {
    firstPage(known)
    return early
  }
  // The list is cloned before the client reads it: this callback is registered first, so it runs first.
  chats
    .then((response) => (response.ok ? response.clone().json() : undefined))
    .then((body) => {
      if (listsChat(body, chatId)) firstPage(chatId)
    })
    .catch(() => {})
  return early
}

/**
 * A fetch that answers a GET with the early request for the same URL, once, within
 * EARLY_LIFETIME_MS of `since`; every other call goes to `send`. The first call after the
 * lifetime drops every answer left untaken.
 */
export function earlyFetch(
  early: EarlyRequests | undefined,
  send: typeof fetch,
  since = Date.now(),
  now: () => number = Date.now,
): typeof fetch {
  return (input, init) => {
    if (early && early.size > 0 && now() - since > EARLY_LIFETIME_MS) early.clear()
    if (early && early.size > 0 && typeof input === 'string' && (init?.method ?? 'GET') === 'GET') {
      const taken = early.get(input)
      early.delete(input)
      if (taken) return taken
    }
    return send(input, init)
  }
}

/** What the inline script of index.html runs: the page's early requests, left for the client. */
export function startPageEarlyRequests(): void {
  window.atriumEarly = startEarlyRequests({
    storage: localStorageOrNone(),
    location,
    fetch: (...args) => fetch(...args),
  })
}
