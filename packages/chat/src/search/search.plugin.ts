import { ApiError, type Service } from '@atrium/platform'
import { Type } from 'typebox'
import { requireMember, requireUser } from '../access.ts'
import type { CallerResolver } from '../caller.ts'
import { toMessageViews } from '../messages/message-rows.ts'
import { MessageView } from '../messages/message-view.ts'
import { Id } from '../messages/messages.schema.ts'
import type { Store } from '../store.ts'

export interface SearchPluginOptions {
  store: Store
  resolveCaller: CallerResolver
}

const searchMessages = {
  querystring: Type.Object(
    {
      q: Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Words to find; each must appear in a message, as a whole or partial word, in any case.',
      }),
      chat_id: Type.Optional(Id),
      before: Type.Optional(Id),
      limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ messages: Type.Array(MessageView), has_more: Type.Boolean() }) },
}

/** search_messages: full-text search in the caller's chats, newest first, paged with `before`. */
export default async function searchPlugin(app: Service, { store, resolveCaller }: SearchPluginOptions) {
  app.get('/search_messages', { schema: searchMessages }, async (request) => {
    const caller = await resolveCaller(request)
    // Spec: "Guests cannot upload files or use file browser or search".
    requireUser(caller, 'search')
    const { q, chat_id, before, limit } = request.query
    const query = q.trim()
    if (query === '') throw new ApiError('InvalidRequest', 'q is empty')
    if (chat_id !== undefined) await requireMember(store, Number(chat_id), caller)
    const rows = await store.search.search({
      member: caller.member,
      query,
      chatId: chat_id === undefined ? undefined : Number(chat_id),
      before: before === undefined ? undefined : Number(before),
      limit: limit + 1,
    })
    return { messages: await toMessageViews(store, rows.slice(0, limit), caller.member), has_more: rows.length > limit }
  })
}
