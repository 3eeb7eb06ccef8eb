import { ApiError, TIMETICK_PATTERN } from '@atrium/platform'
import { Type } from 'typebox'
import { MessageView } from './message-view.ts'

/** An id in its public string form. */
export const Id = Type.String({ pattern: TIMETICK_PATTERN, description: 'A timetick id as a decimal string.' })

/** A chat member (CRM id or guest id) as a decimal string; never 0, which means "nobody". */
export const MemberId = Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: 'A CRM or guest id; never 0.' })

/** Longest message content in characters (Unicode code points), on every path that writes content. */
export const MAX_CONTENT = 16_384

/**
 * Refuses content longer than MAX_CONTENT with MessageTooLong (413). Checked by the handlers rather
 * than the schema, so that the caller gets this code instead of a generic InvalidRequest.
 */
export function requireContentLength(content: string, what = 'the message'): void {
  // Code points never outnumber UTF-16 units, so most texts need no counting.
  if (content.length <= MAX_CONTENT) return
  let count = 0
  for (const _ of content) count++
  if (count > MAX_CONTENT) {
    throw new ApiError('MessageTooLong', `${what} is ${count} characters long; at most ${MAX_CONTENT} are allowed`)
  }
}

export const sendMessage = {
  description:
    'An `Idempotency-Key` header (1–64 of `A-Za-z0-9_.:-`) makes a repeat answer the first message ' +
    '(with `Idempotent-Replayed: true`) instead of posting it again (docs/chat-api.md, "Sending once").',
  body: Type.Object(
    {
      chat_id: Id,
      content: Type.String({
        description: `Markdown text, at most ${MAX_CONTENT} characters; for a reaction, the emoji; with a file, its caption (may be '').`,
      }),
      file: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 8192,
          description: 'The X-File-Token of a finished upload of the sender (docs/files.md): attaches that file.',
        }),
      ),
      reply_to: Type.Optional(Id),
      reaction_to: Type.Optional(Id),
      widget: Type.Optional(
        Type.Object(
          {},
          { additionalProperties: true, description: 'Widget JSON; stored as content with the Widget flag.' },
        ),
      ),
    },
    { additionalProperties: false },
  ),
  response: { 200: MessageView },
}

export const getChatMessages = {
  querystring: Type.Object(
    {
      chat_id: Id,
      before: Type.Optional(Id),
      after: Type.Optional(Id),
      limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ messages: Type.Array(MessageView), has_more: Type.Boolean() }) },
}

export const getChatFiles = {
  querystring: Type.Object(
    { chat_id: Id, before: Type.Optional(Id), limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }) },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ files: Type.Array(MessageView), has_more: Type.Boolean() }) },
}

export const editMessage = {
  body: Type.Object(
    {
      message_id: Id,
      content: Type.String({ minLength: 1, description: `The new text, at most ${MAX_CONTENT} characters.` }),
    },
    { additionalProperties: false },
  ),
  response: { 200: MessageView },
}

export const messageAction = {
  body: Type.Object({ message_id: Id }, { additionalProperties: false }),
  response: { 200: MessageView },
}

export const forwardMessage = {
  body: Type.Object({ message_id: Id, to_chat_id: Id }, { additionalProperties: false }),
  response: { 200: MessageView },
}

export const toggleReaction = {
  body: Type.Object(
    { message_id: Id, emoji: Type.String({ minLength: 1, maxLength: 32 }) },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ added: Type.Boolean(), message: MessageView }) },
}

export const hardDeleteMessage = {
  body: Type.Object({ message_id: Id }, { additionalProperties: false }),
  response: { 200: Type.Object({ deleted: Type.String() }) },
}
