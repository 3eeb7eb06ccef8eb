import type { ChatView, MessagePage, MessageView, ReadMarker } from './chat-types.ts'
import type { ApiClient } from './client.ts'

const MSG = '/msg/v1'

/**
 * The chat module's operations the client uses, through the gateway (docs/chat-api.md). Later
 * features (reply, reactions, edit, delete, pin, forward, search, members) add their calls here.
 */
export function createChatApi(client: ApiClient) {
  return {
    /** The caller's chats: pinned first, then by newest message. */
    async getChats(): Promise<ChatView[]> {
      return (await client.get<{ chats: ChatView[] }>(`${MSG}/get_chats`)).chats
    },

    getChatInfo: (chatId: string) => client.get<ChatView>(`${MSG}/get_chat_info`, { chat_id: chatId }),

    /** Newest first without a cursor or with `before`; oldest first with `after`. */
    getChatMessages: (chatId: string, cursor: { before?: string; after?: string; limit?: number } = {}) =>
      client.get<MessagePage>(`${MSG}/get_chat_messages`, { chat_id: chatId, ...cursor }),

    sendMessage: (chatId: string, content: string) =>
      client.post<MessageView>(`${MSG}/send_message`, { chat_id: chatId, content }),

    /** Marks everything up to `messageId` (default: everything) read. */
    markRead: (chatId: string, messageId?: string) =>
      client.post<ReadMarker>(
        `${MSG}/mark_read`,
        messageId ? { chat_id: chatId, message_id: messageId } : { chat_id: chatId },
      ),

    /** Opens the 1-to-1 chat with `peer` (a CRM id), or returns the existing one. */
    async createPrivateChat(peer: string): Promise<{ chat: ChatView; created: boolean }> {
      return client.post(`${MSG}/create_private_chat`, { peer })
    },

    /** Sets the caller's own display name, shown to others as the name of private chats. */
    updateProfile: (name: string) => client.post<{ member: string; name: string }>(`${MSG}/update_profile`, { name }),
  }
}

export type ChatApi = ReturnType<typeof createChatApi>
