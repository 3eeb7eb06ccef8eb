/**
 * Requests the client starts before it knows who is signed in, to save a round trip on the way to
 * the first render (bench/web-render.ts): with a hint that this browser had a session, the chat
 * list is asked for beside the session itself, and the open chat's first page as soon as the list
 * names it.
 */
import type { ChatApi } from './api/chat-api.ts'
import type { ChatView, MessagePage } from './api/chat-types.ts'
import { PAGE } from './chat/conversation/conversation-state.ts'
import { parseRoute } from './router/routes.ts'

/** Non-secret: only says this browser was signed in when it last looked. */
export const SIGNED_IN_KEY = 'atrium.signedIn'

type HintStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>

/** Whether the browser was signed in when it last asked (a hint: the session may have ended since). */
export function probablySignedIn(storage: HintStorage | undefined): boolean {
  try {
    return storage?.getItem(SIGNED_IN_KEY) === '1'
  } catch {
    return false
  }
}

/** Records whether the browser is signed in; storage that refuses (private mode, quota) is ignored. */
export function rememberSignedIn(storage: HintStorage | undefined, signedIn: boolean): void {
  try {
    if (signedIn) storage?.setItem(SIGNED_IN_KEY, '1')
    else storage?.removeItem(SIGNED_IN_KEY)
  } catch {
    // Only a hint: without it the list is requested after the session, as without storage.
  }
}

/** A request started ahead of the screen that needs it: the first taker gets it, later ones ask afresh. */
export interface Prefetched<T> {
  take(): Promise<T> | undefined
}

/** Holds `promise` for one taker; a failure nobody takes stays silent (no unhandled rejection). */
export function prefetched<T>(promise: Promise<T> | undefined): Prefetched<T> {
  let pending = promise
  pending?.catch(() => {})
  return {
    take() {
      const taken = pending
      pending = undefined
      return taken
    },
  }
}

/** What start-up asked for ahead of the screens; empty when the hint or the path did not call for it. */
export interface StartUpRequests {
  /** The chat list, for the messenger's first load. */
  chats: Prefetched<ChatView[]>
  /** The first page of the chat in the path, asked for as soon as the list named it. */
  firstPage(chatId: string): Promise<MessagePage> | undefined
}

/**
 * With the signed-in hint and a messenger path, asks for the chat list at once and, when it
 * arrives and holds the path's chat (by chat id; a peer's CRM id waits for the messenger), for
 * that chat's first page in the same tick, rather than after the messenger has rendered.
 */
export function startUpRequests(
  storage: HintStorage | undefined,
  where: { pathname: string; search: string },
  api: Pick<ChatApi, 'getChatsWithHidden' | 'getChatMessages'>,
): StartUpRequests {
  const route = parseRoute(where.pathname, where.search)
  if (!probablySignedIn(storage) || route.name !== 'messenger') {
    return { chats: prefetched<ChatView[]>(undefined), firstPage: () => undefined }
  }
  const chats = api.getChatsWithHidden()
  let page: { chatId: string; request: Prefetched<MessagePage> } | undefined
  const { chatId } = route
  chats.then(
    (list) => {
      if (chatId && list.some((chat) => chat.id === chatId))
        page = { chatId, request: prefetched(api.getChatMessages(chatId, { limit: PAGE })) }
    },
    () => {},
  )
  return {
    chats: prefetched(chats),
    firstPage: (id) => (page?.chatId === id ? page.request.take() : undefined),
  }
}
