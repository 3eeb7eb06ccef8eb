import type { MessageView } from '../api/chat-types.ts'
import { compareIds } from '../chat/chat-list/chat-list-state.ts'

/** The file browser's list: messages with a file, newest first, and whether older ones remain. */
export interface ChatFiles {
  files: MessageView[]
  hasMore: boolean
  loaded: boolean
}

export const EMPTY_CHAT_FILES: ChatFiles = { files: [], hasMore: false, loaded: false }

/**
 * Adds a page of get_chat_files (newest first) to the list: a message already listed is replaced by
 * its newer view, messages without a file (deleted since) are left out, the order stays newest first.
 */
export function addFilePage(list: ChatFiles, page: { files: MessageView[]; has_more: boolean }): ChatFiles {
  const byId = new Map(list.files.map((message) => [message.id, message]))
  for (const message of page.files) byId.set(message.id, message)
  const files = [...byId.values()]
    .filter((message) => message.file !== null && !message.deleted)
    .sort((a, b) => compareIds(b.id, a.id))
  return { files, hasMore: page.has_more, loaded: true }
}

/** The `before` cursor of the next page: the oldest message listed. */
export function olderCursor(list: ChatFiles): string | undefined {
  return list.files.at(-1)?.id
}
