/**
 * The messenger's first data, read before its first render when index.html's start-up script
 * already asked for it (early-requests.ts): the chat list and the open chat's first page. The
 * messenger then renders the list and the conversation in one pass, instead of painting an empty
 * shell, then the list, then the messages (bench/web-render.ts).
 */
import type { ChatApi } from './api/chat-api.ts'
import type { ChatView, MessagePage } from './api/chat-types.ts'
import { findChat } from './chat/chat-list/chat-list-state.ts'
import { PAGE } from './chat/conversation/page-size.ts'
import { CHAT_LIST_URL, type EarlyRequests } from './early-requests.ts'
import { parseRoute } from './router/routes.ts'

export interface FirstData {
  chats: ChatView[]
  /** The event tick the list was read up to (get_chats), when the chat module gives it: the live stream starts from it. */
  tick?: number
  /** The first page of the chat the path names, when the list holds it. */
  page?: { chatId: string; page: MessagePage }
}

/** How long the first render waits for the first data; later, the messenger loads it itself. */
export const FIRST_DATA_WAIT_MS = 1500

/**
 * The chat list and the path's first page, when the start-up script asked for the list (the
 * signed-in hint on a messenger path); undefined when it did not, when a request fails, or after
 * `waitMs`, so a slow server never holds back the first paint for long.
 */
export async function readFirstData(
  early: EarlyRequests | undefined,
  chat: Pick<ChatApi, 'getChatsWithHidden' | 'getChatMessages'>,
  where: { pathname: string; search: string },
  waitMs = FIRST_DATA_WAIT_MS,
): Promise<FirstData | undefined> {
  if (!early?.has(CHAT_LIST_URL)) return undefined
  const route = parseRoute(where.pathname, where.search)
  const read = async (): Promise<FirstData> => {
    const { chats, tick } = await chat.getChatsWithHidden()
    const open = route.name === 'messenger' ? findChat(chats, route.chatId) : undefined
    if (!open) return { chats, tick }
    const page = await chat.getChatMessages(open.id, { limit: PAGE }).catch(() => undefined)
    return page ? { chats, tick, page: { chatId: open.id, page } } : { chats, tick }
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, waitMs, undefined)
  })
  try {
    return await Promise.race([read().catch(() => undefined), late])
  } finally {
    clearTimeout(timer)
  }
}
