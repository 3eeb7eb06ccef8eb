/** A chat as the caller sees it (docs/chat-api.md, ChatView). */
export interface ChatView {
  id: string
  /** 1 private, 2 group, 4 info channel. */
  type: number
  name: string
  description: string
  owner: string
  /** Private chat: the other participant; otherwise "0". */
  peer: string
  archived: boolean
  role: number
  pinned: boolean
  hidden: boolean
  /** The caller muted the chat: no push or Telegram notification for it. */
  muted: boolean
  /** When that mute ends (ISO time); '' when not muted or muted with no end. */
  muted_until: string
  member_count: number
  unread: number
  last_message: string
  /** The newest visible message for the list row; null when the chat has none. */
  last_message_preview: LastMessagePreview | null
  created: string
  timetick_update: string
  /** The client context: '' (or absent) for an ordinary chat, 'support' or 'discussion'. */
  context?: '' | 'support' | 'discussion'
  /** Support chat: the customer's CRM id; otherwise "0". */
  customer?: string
  /** Discussion: the FeedbackType and id of the object discussed. */
  object_type?: number
  object_id?: string
}

/** get_chats: the chats, and the event tick the list was read up to (docs/chat-api.md). */
export interface ChatList {
  chats: ChatView[]
  /** Absent from a chat module older than this client (a release rolling out): the stream starts fresh. */
  tick?: number
}

/** A chat's newest visible message as its list row shows it (docs/chat-api.md, ChatView). */
export interface LastMessagePreview {
  id: string
  sender: string
  /** The sender's profile name, '' when they have none. */
  sender_name: string
  /** The first 200 characters of the text; '' for a widget or a file without caption. */
  content: string
  /** '' without a file. */
  file_name: string
  flags: number
  edited: boolean
  time: string
}

/** A reaction on a message, one entry per emoji. */
export interface ReactionView {
  emoji: string
  count: number
  mine: boolean
}

/** A message (docs/chat-api.md, MessageView). */
export interface MessageView {
  id: string
  chat_id: string
  owner: string
  content: string
  flags: number
  /** The attached file (File flag); null without one and once the message is deleted. */
  file: FileView | null
  link_kind: 'none' | 'reply'
  linked_message_id: string
  reply_to: { id: string; owner: string; content: string; deleted: boolean } | null
  reactions: ReactionView[]
  forwarded_from: string
  pinned: boolean
  deleted: boolean
  edited: boolean
  time: string
  timetick_update: string
}

/** A message's file: `id` names it for downloads, `type` is the content type its uploader declared. */
export interface FileView {
  id: string
  name: string
  size: number
  type: string
}

/** A page of get_chat_files: messages with a file, newest first. */
export interface FilePage {
  files: MessageView[]
  has_more: boolean
}

/** A page of get_chat_messages. */
export interface MessagePage {
  messages: MessageView[]
  has_more: boolean
}

/** The answer of mark_read. */
export interface ReadMarker {
  chat_id: string
  last_read: string
  unread: number
}

/** A member of a chat (docs/chat-api.md, MemberView). */
export interface MemberView {
  /** The name others see (docs/people.md). */
  name: string
  /** CRM id, or guest id. */
  member: string
  role: number
  owner: boolean
  admin: boolean
  joined: string
  last_read: string
}

/** A page of get_chat_members, members in ascending id order. */
export interface MemberPage {
  members: MemberView[]
  member_count: number
  has_more: boolean
}

/** An invite code and the client route that opens it (create_invite). */
export interface InviteView {
  code: string
  kind: 'personal' | 'group'
  chat_id: string
  path: string
}

/** The answer of join_invite: who the caller is in the conversation, and the conversation. */
export interface JoinedInvite {
  member: string
  guest: boolean
  kind: 'personal' | 'group'
  calls_allowed: boolean
  chat: ChatView
}

/** The answer of toggle_message_reaction: whether the reaction was added, and the reacted message. */
export interface ReactionToggle {
  added: boolean
  message: MessageView
}

/** A page of search_messages, newest first; reaction rows come with `link_kind` "reaction". */
export interface SearchPage {
  messages: MessageView[]
  has_more: boolean
}
