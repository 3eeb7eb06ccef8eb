import { useState } from 'preact/hooks'
import type { ChatApi } from '../../api/chat-api.ts'
import { failureText } from '../../api/envelope.ts'
import { type ConversationAction, type ConversationState, oldestId, PAGE } from './conversation-state.ts'

/**
 * "Load older messages" of a conversation (a member's or a guest's): the page before the oldest
 * loaded message, and whether it is on its way.
 */
export function useOlderMessages(
  api: Pick<ChatApi, 'getChatMessages'>,
  chatId: string,
  state: ConversationState,
  dispatch: (action: ConversationAction) => void,
  onError: (text: string) => void,
) {
  const [loadingOlder, setLoadingOlder] = useState(false)

  async function loadOlder() {
    const before = oldestId(state)
    if (!before) return
    setLoadingOlder(true)
    try {
      const page = await api.getChatMessages(chatId, { before, limit: PAGE })
      dispatch({ type: 'older', messages: page.messages, hasMore: page.has_more })
    } catch (failure) {
      onError(failureText(failure))
    } finally {
      setLoadingOlder(false)
    }
  }

  return { loadingOlder, loadOlder }
}
