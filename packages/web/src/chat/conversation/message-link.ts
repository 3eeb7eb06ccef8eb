import type { MessageView } from '../../api/chat-types.ts'
import { routePath } from '../../router/routes.ts'

/** A location's `#message-{id}`: the chat opens at that message (a search result, a copied link). */
const MESSAGE_HASH = /^#message-([1-9][0-9]{0,15})$/

/** The path that opens `message` in its chat. */
export function messagePath(message: MessageView): string {
  return `${routePath({ name: 'messenger', chatId: message.chat_id })}#message-${message.id}`
}

/** The address of `message` to share: it opens the chat at the message for any member, after signing in if need be. */
export function messageLink(message: MessageView, origin = location.origin): string {
  return `${origin}${messagePath(message)}`
}

/** The message id a location's hash names, if it names one. */
export function linkedMessage(hash: string): string | undefined {
  return MESSAGE_HASH.exec(hash)?.[1]
}
