import type { ChatView } from './chat-types.ts'

/** A private chat of users 1001 and 1002 without messages, as get_chats answers it; for tests. */
export function chatView(id: string, fields: Partial<ChatView> = {}): ChatView {
  return {
    id,
    type: 1,
    name: `chat ${id}`,
    description: '',
    owner: '1001',
    peer: '1002',
    archived: false,
    role: 4,
    pinned: false,
    hidden: false,
    muted: false,
    muted_until: '',
    member_count: 2,
    unread: 0,
    last_message: '0',
    last_message_preview: null,
    created: '2026-11-22T06:16:50.198Z',
    timetick_update: id,
    ...fields,
  }
}
