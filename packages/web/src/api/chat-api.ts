import type {
  ChatList,
  ChatView,
  FilePage,
  InviteView,
  JoinedInvite,
  MemberPage,
  MemberView,
  MessagePage,
  MessageView,
  ReactionToggle,
  ReadMarker,
  SearchPage,
} from './chat-types.ts'
import type { ApiClient } from './client.ts'
import { createContextsApi } from './contexts-api.ts'
import { createTelegramApi } from './telegram-api.ts'

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

    /** Tells the chat's other members that the caller is typing (the gateway's POST /auth/v1/typing). */
    sendTyping: (chatId: string) =>
      client.post<{ chat_id: string; expires_ms: number }>('/auth/v1/typing', { chat_id: chatId }),

    /** Which members of the chat have a live connection (the gateway's GET /auth/v1/presence). */
    getPresence: (chatId: string) =>
      client.get<{ chat_id: string; members: { member: string; online: boolean }[] }>('/auth/v1/presence', {
        chat_id: chatId,
      }),

    getChatInfo: (chatId: string) => client.get<ChatView>(`${MSG}/get_chat_info`, { chat_id: chatId }),

    /** Newest first without a cursor or with `before`; oldest first with `after`. */
    getChatMessages: (chatId: string, cursor: { before?: string; after?: string; limit?: number } = {}) =>
      client.get<MessagePage>(`${MSG}/get_chat_messages`, { chat_id: chatId, ...cursor }),

    /** Sends a text message, once even when an answer is lost and it is sent again (client.postOnce). */
    sendMessage: (chatId: string, content: string) =>
      client.postOnce<MessageView>(`${MSG}/send_message`, { chat_id: chatId, content }),

    /**
     * Sends the uploaded file named by `token` (the gateway's X-File-Token) as a message; `content`
     * is its caption and may be empty. With `replyTo` the message is a reply.
     */
    sendFile: (chatId: string, content: string, token: string, replyTo?: string) =>
      client.postOnce<MessageView>(`${MSG}/send_message`, {
        chat_id: chatId,
        content,
        file: token,
        ...(replyTo ? { reply_to: replyTo } : {}),
      }),

    /** Messages of the chat that carry a file, newest first; `before` is the oldest shown (members, not guests). */
    getChatFiles: (chatId: string, page: { before?: string; limit?: number } = {}) =>
      client.get<FilePage>(`${MSG}/get_chat_files`, { chat_id: chatId, ...page }),

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

    /**
     * The caller's chats including those they hid (the list shows them behind a toggle), and the
     * event tick the list was read up to: a stream resumed from it misses nothing the list lacks.
     */
    async getChatsWithHidden(): Promise<ChatList> {
      return client.get<ChatList>(`${MSG}/get_chats`, { include_hidden: true })
    },
    /** Creates a group (type 2) or info channel (type 4) owned by the caller. */
    async createChat(fields: { type: 2 | 4; name: string; description?: string; members?: string[] }) {
      return (await client.post<{ chat: ChatView; created: boolean }>(`${MSG}/create_chat`, fields)).chat
    },
    /** One page of members in ascending id order; `after` is the last member of the previous page. */
    getChatMembers: (chatId: string, page: { after?: string; limit?: number } = {}) =>
      client.get<MemberPage>(`${MSG}/get_chat_members`, { chat_id: chatId, ...page }),
    /** Names of people who share a chat with the caller (get_profiles); others are left out. */
    getProfiles: async (members: string[]) =>
      (
        await client.get<{ profiles: Array<{ member: string; name: string }> }>(`${MSG}/get_profiles`, {
          members: members.join(','),
        })
      ).profiles,
    addChatMember: (chatId: string, member: string, admin = false) =>
      client.post<MemberView>(`${MSG}/add_chat_member`, { chat_id: chatId, member, admin }),
    removeMember: (chatId: string, member: string) =>
      client.post<{ chat_id: string; member: string }>(`${MSG}/remove_member`, { chat_id: chatId, member }),
    /**
     * Grants or revokes Admin of `member`, or sets the caller's own pinned, hidden and muted, or
     * mutes until `muted_until` (omit `member`).
     */
    updateMember: (
      chatId: string,
      fields: {
        member?: string
        admin?: boolean
        pinned?: boolean
        hidden?: boolean
        muted?: boolean
        muted_until?: string
      },
    ) => client.post<MemberView>(`${MSG}/update_member`, { chat_id: chatId, ...fields }),
    leaveChat: (chatId: string) => client.post<{ chat_id: string }>(`${MSG}/leave_chat`, { chat_id: chatId }),
    /** Archives (or with `false` unarchives) a private chat for both participants. */
    archiveChat: (chatId: string, archived = true) =>
      client.post<ChatView>(`${MSG}/archive_chat`, { chat_id: chatId, archived }),
    /** A personal invite (a guest gets a private chat with the caller) or a group invite to `chatId`. */
    createInvite: (kind: 'personal' | 'group', chatId?: string) =>
      client.post<InviteView>(`${MSG}/create_invite`, chatId ? { kind, chat_id: chatId } : { kind }),
    /** Joins an invite: as the guest of this device (X-Device-Guid) or, signed in, as a member of a group. */
    joinInvite: (code: string) => client.post<JoinedInvite>(`${MSG}/join_invite`, { code }),
    /** Sets the caller's own display name, shown to others as the name of private chats. */
    updateProfile: (name: string) => client.post<{ member: string; name: string }>(`${MSG}/update_profile`, { name }),

    ...createMessageActionsApi(client),
    ...createContextsApi(client),
    ...createTelegramApi(client),
  }
}

export type ChatApi = ReturnType<typeof createChatApi>

/** The operations on single messages of an open conversation and the message search (docs/chat-api.md, Messages and Search). */
export function createMessageActionsApi(client: ApiClient) {
  return {
    /** Sends `content` as a reply to `replyTo`, a message of the same chat. */
    sendReply: (chatId: string, content: string, replyTo: string) =>
      client.postOnce<MessageView>(`${MSG}/send_message`, { chat_id: chatId, content, reply_to: replyTo }),

    /** Replaces the content of the caller's own message. */
    editMessage: (messageId: string, content: string) =>
      client.post<MessageView>(`${MSG}/edit_message`, { message_id: messageId, content }),

    /** Marks the message deleted (the author, or the chat's owner or an admin outside private chats). */
    softDeleteMessage: (messageId: string) =>
      client.post<MessageView>(`${MSG}/soft_delete_message`, { message_id: messageId }),

    pinMessage: (messageId: string) => client.post<MessageView>(`${MSG}/pin_message`, { message_id: messageId }),

    unpinMessage: (messageId: string) => client.post<MessageView>(`${MSG}/unpin_message`, { message_id: messageId }),

    /** Adds the caller's reaction with `emoji`, or removes it when the caller already reacted with it. */
    toggleReaction: (messageId: string, emoji: string) =>
      client.post<ReactionToggle>(`${MSG}/toggle_message_reaction`, { message_id: messageId, emoji }),

    /** Posts a copy of the message into another chat of the caller. */
    forwardMessage: (messageId: string, toChatId: string) =>
      client.post<MessageView>(`${MSG}/forward_message`, { message_id: messageId, to_chat_id: toChatId }),

    /** Messages of the caller's chats (or of `chat_id`) containing every word of `q`, newest first. */
    searchMessages: (q: string, options: { chat_id?: string; before?: string; limit?: number } = {}) =>
      client.get<SearchPage>(`${MSG}/search_messages`, { q, ...options }),
  }
}
