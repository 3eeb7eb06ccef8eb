import type { ChatView } from './chat-types.ts'
import type { ApiClient } from './client.ts'

const MSG = '/msg/v1'

/** A support chat waiting for the team (docs/chat-api.md, Escalations). */
export interface EscalationView {
  chat_id: string
  customer: string
  customer_name: string
  waiting_since: string
  waiting_seconds: number
  unanswered: number
  message_id: string
  content: string
}

/** A stored rating (docs/chat-api.md, create_feedback). */
export interface FeedbackView {
  id: string
  object_type: number
  object_id: string
  rating: number
  sentiment: 'positive' | 'neutral' | 'negative'
  comment: string
  time: string
}

/** The operations behind the client contexts: support, feedback and discussions (docs/chat-api.md). */
export function createContextsApi(client: ApiClient) {
  return {
    /** The caller's support chat, created with the team and its welcome message on first use. */
    openSupportChat: () => client.post<{ chat: ChatView; created: boolean }>(`${MSG}/open_support_chat`, {}),

    /** Support chats waiting longer than the module's limit for a team answer (team members only). */
    getSupportEscalations: () =>
      client.get<{ escalations: EscalationView[]; escalate_after_seconds: number }>(`${MSG}/get_support_escalations`),

    /** The discussion chat about an object, created on first use; the caller joins it. */
    openDiscussion: (objectType: number, objectId: string) =>
      client.post<{ chat: ChatView; created: boolean; joined: boolean }>(`${MSG}/open_discussion`, {
        object_type: objectType,
        object_id: objectId,
      }),

    /** Rates an object 1–5 with an optional comment. */
    createFeedback: (objectType: number, objectId: string, rating: number, comment: string) =>
      client.post<{ feedback: FeedbackView }>(`${MSG}/create_feedback`, {
        object_type: objectType,
        object_id: objectId,
        rating,
        ...(comment ? { comment } : {}),
      }),
  }
}
