import { ApiError, ChatType, FeedbackType, type Service } from '@atrium/platform'
import { Type } from 'typebox'
import { requireUser } from '../access.ts'
import type { CallerResolver } from '../caller.ts'
import { discussionKey, objectTypeName } from '../chats/chat-context.ts'
import { ChatView, toChatEventData } from '../chats/chat-view.ts'
import { describeChat } from '../chats/chats.plugin.ts'
import { newChatRow } from '../chats/chats.repository.ts'
import { newMemberRow } from '../members/members.repository.ts'
import type { Store } from '../store.ts'

export interface DiscussionsPluginOptions {
  store: Store
  resolveCaller: CallerResolver
}

/** The object ids a discussion may be about: the client's route segment (/chat/discuss/{type}/{id}). */
export const OBJECT_ID_PATTERN = '^[A-Za-z0-9_-]{1,64}$'

const FEEDBACK_TYPES = Object.values(FeedbackType) as number[]

const openDiscussion = {
  body: Type.Object(
    {
      object_type: Type.Integer({
        minimum: 1,
        description: 'FeedbackType of the object: 1 App, 2 Service, 3 Product, 4 Order, 5 Chat, 6 User.',
      }),
      object_id: Type.String({ pattern: OBJECT_ID_PATTERN, description: 'Letters, digits, _ and -, at most 64.' }),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ chat: ChatView, created: Type.Boolean(), joined: Type.Boolean() }) },
}

/**
 * open_discussion: the group chat about an object, created by its first opener (one per object:
 * the unique pair key holds it under parallel calls); any signed-in user of the project who opens
 * it joins it as a plain member. No one is its owner or admin, so no member can close it to others.
 */
export default async function discussionsPlugin(app: Service, { store, resolveCaller }: DiscussionsPluginOptions) {
  app.post('/open_discussion', { schema: openDiscussion }, async (request) => {
    const caller = await resolveCaller(request)
    requireUser(caller, 'open discussions')
    const { object_type: objectType, object_id: objectId } = request.body
    if (!FEEDBACK_TYPES.includes(objectType)) {
      throw new ApiError('InvalidRequest', `object_type must be one of ${FEEDBACK_TYPES.join(', ')}`)
    }
    const key = discussionKey(objectType, objectId)
    return store.transact(async (unit) => {
      const fresh = newChatRow(store.nextTick(), {
        type: ChatType.Group,
        owner: caller.member,
        name: `Discussion: ${objectTypeName(objectType)} ${objectId}`,
        pair_key: key,
        app_id: caller.appId,
      })
      const created = await unit.chats.insert(fresh)
      const chat = created ? fresh : await unit.chats.findByPair(key)
      if (!chat) throw new Error(`discussion ${key} neither inserted nor found`)
      const joined = await unit.members.add(newMemberRow(chat.timetick, caller.member, 0, store.nextTick()))
      if (created) {
        await unit.emit({
          chat_id: chat.timetick,
          type: 'ChatCreated',
          data: toChatEventData(chat),
          app_id: chat.app_id,
        })
      } else if (joined) {
        const data = {
          chat_id: String(chat.timetick),
          member: String(caller.member),
          role: 0,
          by: String(caller.member),
        }
        await unit.emit({ chat_id: chat.timetick, type: 'MemberAdded', data, app_id: chat.app_id })
      }
      const membership = (await unit.members.find(chat.timetick, caller.member))!
      return { chat: await describeChat(unit, chat, membership), created, joined }
    })
  })
}
