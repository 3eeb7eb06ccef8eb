import { FeedbackType } from '@atrium/platform'
import { type RawBuilder, sql } from 'kysely'
import type { ChatRow } from './chats.repository.ts'

/**
 * The client contexts a chat may belong to (spec: "Client chat configuration"), kept in the chat's
 * unique pair key so that the database holds "one per X": one support chat per customer
 * (`support:<crm id>`) and one discussion per object (`discuss:<FeedbackType>:<object id>`).
 */
export type ChatContext =
  | { context: ''; customer: 0; objectType: 0; objectId: '' }
  | { context: 'support'; customer: number; objectType: 0; objectId: '' }
  | { context: 'discussion'; customer: 0; objectType: number; objectId: string }

/** The pair key of a customer's support chat. */
export function supportKey(customer: number): string {
  return `support:${customer}`
}

/** The pair key of the discussion about an object. */
export function discussionKey(objectType: number, objectId: string): string {
  return `discuss:${objectType}:${objectId}`
}

/**
 * A support chat, as the partial index chats_support (migration 0012) states it: literals, not
 * parameters, so queries using it can use that index.
 */
export function isSupportChat(): RawBuilder<boolean> {
  return sql<boolean>`pair_key LIKE ${sql.lit('support:%')}`
}

/** The context of a chat, read from its pair key. */
export function contextOf(chat: Pick<ChatRow, 'pair_key'>): ChatContext {
  const [kind, first, ...rest] = chat.pair_key.split(':')
  if (kind === 'support') return { context: 'support', customer: Number(first), objectType: 0, objectId: '' }
  if (kind === 'discuss') {
    return { context: 'discussion', customer: 0, objectType: Number(first), objectId: rest.join(':') }
  }
  return { context: '', customer: 0, objectType: 0, objectId: '' }
}

const TYPE_NAMES = new Map<number, string>(Object.entries(FeedbackType).map(([name, value]) => [value, name]))

/** The English name of a FeedbackType value ("Order"), or "Object" for an unknown one. */
export function objectTypeName(objectType: number): string {
  return TYPE_NAMES.get(objectType) ?? 'Object'
}
