import { ApiError, ChatType, MemberRole, type Service, timetickAt, timetickTime } from '@atrium/platform'
import { Type } from 'typebox'
import { type Caller, requireUser } from '../access.ts'
import type { CallerResolver } from '../caller.ts'
import { supportKey } from '../chats/chat-context.ts'
import { ChatView, toChatEventData } from '../chats/chat-view.ts'
import { describeChat } from '../chats/chats.plugin.ts'
import { newChatRow } from '../chats/chats.repository.ts'
import type { ChatConfig } from '../config.ts'
import { newMemberRow } from '../members/members.repository.ts'
import { newMessage, postMessage } from '../messages/message-rows.ts'
import type { Store } from '../store.ts'

/** The chat module's support settings: the authority on who answers and what is said first. */
export type SupportSettings = ChatConfig['Support']

export interface SupportPluginOptions {
  store: Store
  resolveCaller: CallerResolver
  support: SupportSettings
  /** The clock escalations are measured against (tests move it instead of waiting). */
  now: () => number
}

/** Name of every support chat as its customer sees it; the team sees "Support: <customer>". */
export const SUPPORT_CHAT_NAME = 'Support'

const Escalation = Type.Object({
  chat_id: Type.String(),
  customer: Type.String({ description: 'CRM id of the waiting customer.' }),
  customer_name: Type.String({ description: "The customer's display name, '' when they have none." }),
  waiting_since: Type.String({ description: 'ISO time of the oldest unanswered customer message.' }),
  waiting_seconds: Type.Integer(),
  unanswered: Type.Integer({ description: 'Customer messages since the last team answer.' }),
  message_id: Type.String({ description: 'The oldest unanswered message.' }),
  content: Type.String({ description: 'Its text.' }),
})

const Escalations = Type.Object({
  escalations: Type.Array(Escalation),
  escalate_after_seconds: Type.Integer(),
})

const listQuery = Type.Object(
  { limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }) },
  { additionalProperties: false },
)

const openSupportChat = {
  body: Type.Object({}, { additionalProperties: false }),
  response: { 200: Type.Object({ chat: ChatView, created: Type.Boolean() }) },
}

function isTeam(support: SupportSettings, member: number): boolean {
  return support.TeamCrmIds.includes(String(member))
}

/**
 * Finds or creates the caller's support chat (one per customer: the unique pair key holds it under
 * parallel calls) and makes the current team members of it, so a changed team reaches old chats.
 */
async function openSupport(store: Store, support: SupportSettings, caller: Caller) {
  const team = support.TeamCrmIds.map(Number)
  if (team.length === 0) throw new ApiError('SupportUnavailable')
  const key = supportKey(caller.member)
  return store.transact(async (unit) => {
    const fresh = newChatRow(store.nextTick(), {
      type: ChatType.Group,
      owner: caller.member,
      name: SUPPORT_CHAT_NAME,
      pair_key: key,
      app_id: caller.appId,
    })
    const created = await unit.chats.insert(fresh)
    const chat = created ? fresh : await unit.chats.findByPair(key)
    if (!chat) throw new Error(`support chat ${key} neither inserted nor found`)
    const joined: { member: number; role: number }[] = []
    for (const [member, role] of [[caller.member, 0], ...team.map((id) => [id, MemberRole.Admin])] as const) {
      if (await unit.members.add(newMemberRow(chat.timetick, member, role, store.nextTick()))) {
        joined.push({ member, role })
      }
    }
    if (created) {
      await unit.emit({ chat_id: chat.timetick, type: 'ChatCreated', data: toChatEventData(chat), app_id: chat.app_id })
      if (support.WelcomeMessage) {
        const welcome = newMessage(store, chat.timetick, team[0]!, { content: support.WelcomeMessage })
        await postMessage(unit, welcome, chat.app_id)
        chat.last_message = welcome.timetick
      }
    } else {
      for (const { member, role } of joined) {
        const data = { chat_id: String(chat.timetick), member: String(member), role, by: String(caller.member) }
        await unit.emit({ chat_id: chat.timetick, type: 'MemberAdded', data, app_id: chat.app_id })
      }
    }
    const membership = (await unit.members.find(chat.timetick, caller.member))!
    return { chat: await describeChat(unit, chat, membership), created }
  })
}

/**
 * open_support_chat and get_support_escalations (/msg/v1) for customers and the team, and the
 * operators' GET /private/v1/support/escalations (registered by `internalSupportPlugin`).
 */
export default async function supportPlugin(
  app: Service,
  { store, resolveCaller, support, now }: SupportPluginOptions,
) {
  app.post('/open_support_chat', { schema: openSupportChat }, async (request) => {
    const caller = await resolveCaller(request)
    requireUser(caller, 'open a support chat')
    // A team member would be their own customer and answer themself; they answer customers instead.
    if (isTeam(support, caller.member)) {
      throw new ApiError('Forbidden', 'support team members answer support chats and have none of their own')
    }
    return openSupport(store, support, caller)
  })

  app.get(
    '/get_support_escalations',
    { schema: { querystring: listQuery, response: { 200: Escalations } } },
    async (request) => {
      const caller = await resolveCaller(request)
      if (caller.guest || !isTeam(support, caller.member)) {
        throw new ApiError('Forbidden', 'only the support team (Support.TeamCrmIds) sees escalations')
      }
      // A team member sees the chats they are still in (an admin may have removed them from one).
      const chats = (await store.members.memberships(caller.member)).map((membership) => membership.chat_id)
      return listEscalations(store, support, now, request.query.limit, chats)
    },
  )
}

/** GET /private/v1/support/escalations: every waiting support chat, for operators (/ChatAdmin/Escalations). */
export async function internalSupportPlugin(
  app: Service,
  { store, support, now }: Omit<SupportPluginOptions, 'resolveCaller'>,
) {
  app.get(
    '/support/escalations',
    { schema: { querystring: listQuery, response: { 200: Escalations } } },
    async (request) => listEscalations(store, support, now, request.query.limit),
  )
}

async function listEscalations(
  store: Store,
  support: SupportSettings,
  now: () => number,
  limit: number,
  chatIds?: number[],
) {
  const at = now()
  const before = timetickAt(at - support.EscalateAfterSeconds * 1000 + 1) - 1
  const waiting = await store.escalations.waiting(before, limit, chatIds)
  const [names, messages] = await Promise.all([
    store.profiles.names([...new Set(waiting.map((row) => row.customer))]),
    store.messages.findMany(waiting.map((row) => row.waiting_since)),
  ])
  const contentOf = new Map(messages.map((message) => [message.timetick, message.content]))
  return {
    escalations: waiting.map((row) => {
      const since = timetickTime(row.waiting_since)
      return {
        chat_id: String(row.chat_id),
        customer: String(row.customer),
        customer_name: names.get(row.customer) ?? '',
        waiting_since: new Date(since).toISOString(),
        waiting_seconds: Math.floor((at - since) / 1000),
        unanswered: row.unanswered,
        message_id: String(row.waiting_since),
        content: contentOf.get(row.waiting_since) ?? '',
      }
    }),
    escalate_after_seconds: support.EscalateAfterSeconds,
  }
}
