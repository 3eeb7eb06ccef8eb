import type { MessageView } from './chat-types.ts'

/** A plain text message by user 1001 in chat 100, as get_chat_messages answers it; for tests. */
export function messageView(id: string, fields: Partial<MessageView> = {}): MessageView {
  return {
    id,
    chat_id: '100',
    owner: '1001',
    content: `message ${id}`,
    flags: 0,
    file: null,
    link_kind: 'none',
    linked_message_id: '0',
    reply_to: null,
    reactions: [],
    forwarded_from: '0',
    pinned: false,
    deleted: false,
    edited: false,
    time: '2026-11-22T06:16:50.231Z',
    timetick_update: id,
    ...fields,
  }
}
