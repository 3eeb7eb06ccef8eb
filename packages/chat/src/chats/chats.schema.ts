import { Type } from 'typebox'
import { Id, MemberId } from '../messages/messages.schema.ts'
import { ChatView } from './chat-view.ts'

const Name = Type.String({ minLength: 1, maxLength: 200 })
const Description = Type.String({ maxLength: 2000 })
const ChatRef = Type.Object({ chat_id: Id }, { additionalProperties: false })

export const createChat = {
  body: Type.Object(
    {
      type: Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(4)], { description: 'ChatType flag.' }),
      name: Type.Optional(Name),
      description: Type.Optional(Description),
      members: Type.Optional(Type.Array(MemberId, { maxItems: 1000, uniqueItems: true })),
      peer: Type.Optional(MemberId),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ chat: ChatView, created: Type.Boolean() }) },
}

export const createPrivateChat = {
  body: Type.Object({ peer: MemberId }, { additionalProperties: false }),
  response: { 200: Type.Object({ chat: ChatView, created: Type.Boolean() }) },
}

export const updateChat = {
  body: Type.Object(
    {
      chat_id: Id,
      name: Type.Optional(Type.Union([Name, Type.Null()])),
      description: Type.Optional(Type.Union([Description, Type.Null()])),
    },
    { additionalProperties: false },
  ),
  response: { 200: ChatView },
}

export const archiveChat = {
  body: Type.Object({ chat_id: Id, archived: Type.Boolean({ default: true }) }, { additionalProperties: false }),
  response: { 200: ChatView },
}

export const chatRef = { body: ChatRef, response: { 200: Type.Object({ chat_id: Type.String() }) } }

export const getChatInfo = {
  querystring: ChatRef,
  response: { 200: ChatView },
}

export const getChats = {
  querystring: Type.Object(
    { include_hidden: Type.Boolean({ default: false }), include_archived: Type.Boolean({ default: true }) },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ chats: Type.Array(ChatView), tick: Type.Integer({ minimum: 0 }) }) },
}
