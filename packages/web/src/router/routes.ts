/**
 * The client's routes (spec: "Chat client routes") as data: parsing a location into a Route and
 * building paths back, so links and tests share one table.
 */

/** Where the gateway serves the client. */
export const MOUNT = '/chat/'

const ID = /^[1-9][0-9]{0,15}$/
const SEGMENT = /^[A-Za-z0-9_-]{1,64}$/

export type Route =
  /** /chat/ (no chat open) and /chat/c/{chatId}: the messenger; chatId may also be a private chat's peer CRM id. */
  | { name: 'messenger'; chatId?: string }
  /** /chat?code=<invite_code>: a guest joining through an invite. */
  | { name: 'guest'; code: string }
  /** /chat/sign-in?next=<path>: the sign-in pages (ours; the spec leaves their path open). */
  | { name: 'sign-in'; next: string }
  /** /chat/account: the user's sign-in methods and signed-in devices (ours; the spec names no account route). */
  | { name: 'account' }
  | { name: 'support' }
  | { name: 'calls' }
  | { name: 'feedback'; type: string; id: string }
  | { name: 'files'; chatId: string }
  | { name: 'discuss'; type: string; id: string }
  | { name: 'not-found'; path: string }

/** The operator pages (the gateway's /ProxyAdmin/, the chat module's /ChatAdmin/): server pages, not the client's. */
const OPERATOR_PAGE = /^\/(?:ProxyAdmin|ChatAdmin)(?:[/?]|$)/

/** True for a path the server renders (an operator page), which the client leaves to the browser. */
export function isServerPage(path: string): boolean {
  return OPERATOR_PAGE.test(path)
}

/**
 * A path on this site to return to after sign-in: the client's own, or an operator page that sent
 * the browser here to sign in; the messenger for anything else.
 */
export function safeNext(next: string | null | undefined): string {
  if (!next || !(next.startsWith(MOUNT) || isServerPage(next)) || next.startsWith('//') || /[\\\s]/.test(next)) {
    return MOUNT
  }
  return next
}

/** The route of a location (`pathname` and `search` as `location` gives them). */
export function parseRoute(pathname: string, search = ''): Route {
  const query = new URLSearchParams(search)
  const notFound: Route = { name: 'not-found', path: pathname }
  if (pathname === MOUNT || pathname === MOUNT.slice(0, -1)) {
    const code = query.get('code')
    if (code !== null) return SEGMENT.test(code) ? { name: 'guest', code } : notFound
    return { name: 'messenger' }
  }
  if (!pathname.startsWith(MOUNT)) return notFound
  const parts = pathname.slice(MOUNT.length).split('/')
  if (parts.at(-1) === '') parts.pop()
  const [first, a, b] = parts
  const ids = (...values: (string | undefined)[]) => values.every((value) => value !== undefined && ID.test(value))
  const segments = (...values: (string | undefined)[]) =>
    values.every((value) => value !== undefined && SEGMENT.test(value))
  switch (parts.length === 1 ? first : `${first}/${parts.length}`) {
    case 'sign-in':
      return { name: 'sign-in', next: safeNext(query.get('next')) }
    case 'account':
      return { name: 'account' }
    case 'support':
      return { name: 'support' }
    case 'calls':
      return { name: 'calls' }
    case 'c/2':
      return ids(a) ? { name: 'messenger', chatId: a! } : notFound
    case 'files/2':
      return ids(a) ? { name: 'files', chatId: a! } : notFound
    case 'feedback/3':
      return segments(a, b) ? { name: 'feedback', type: a!, id: b! } : notFound
    case 'discuss/3':
      return segments(a, b) ? { name: 'discuss', type: a!, id: b! } : notFound
    default:
      return notFound
  }
}

/** The path (with query) of a route. */
export function routePath(route: Route): string {
  switch (route.name) {
    case 'messenger':
      return route.chatId ? `${MOUNT}c/${route.chatId}` : MOUNT
    case 'guest':
      return `${MOUNT}?code=${encodeURIComponent(route.code)}`
    case 'sign-in':
      return route.next === MOUNT ? `${MOUNT}sign-in` : `${MOUNT}sign-in?next=${encodeURIComponent(route.next)}`
    case 'account':
    case 'support':
    case 'calls':
      return `${MOUNT}${route.name}`
    case 'feedback':
    case 'discuss':
      return `${MOUNT}${route.name}/${route.type}/${route.id}`
    case 'files':
      return `${MOUNT}files/${route.chatId}`
    case 'not-found':
      return route.path
  }
}
