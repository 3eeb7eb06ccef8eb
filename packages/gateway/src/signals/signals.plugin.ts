import { ApiError, type Service, TIMETICK_PATTERN } from '@atrium/platform'
import { Type } from 'typebox'
import type { EventHub } from '../events/event-hub.ts'
import { toChunk } from '../events/sse-chunks.ts'
import { createFixedWindow } from '../rate-limit/fixed-window.ts'
import { shareUsage, type UsageShare } from '../rate-limit/usage-share.ts'
import type { NodeMessages } from '../server/node-messages.ts'
import type { ChatAudience } from './chat-audience.ts'
import type { Presence } from './presence.ts'
import type { TypingLink } from './typing-link.ts'

/** A typing indicator shows this long after the last signal, unless another one renews it. */
export const TYPING_EXPIRES_MS = 6_000

/**
 * Accepted typing signals per person and chat in each TYPING_WINDOW_MS window (aligned to the
 * clock, as the rate limits' windows are). The client sends one every 3 s at most (two a window);
 * the third leaves room for a reload or a second tab, whose first signal may come right after the
 * last one of the page before.
 */
export const TYPING_PER_WINDOW = 3
export const TYPING_WINDOW_MS = 6_000
/** The typing limit's name in usage reports between gateway processes. */
const TYPING_SCOPE = 'typing'

export interface SignalsPluginOptions {
  hub: EventHub
  presence: Presence
  membersFor: ChatAudience
  now?: () => number
  /** The node's other workers, whose streams get the typing frames too. */
  node?: NodeMessages
  /** Every other gateway process on the same PostgreSQL database; replaces `node` for typing when given. */
  link?: TypingLink
  /** The other gateway processes' typing signals, counted against the limit too (rate-limit/usage-share.ts). */
  usage?: UsageShare
}

const ChatId = Type.String({ pattern: TIMETICK_PATTERN, description: 'A chat id as a decimal string.' })

const typing = {
  summary: 'Tell the other members of a chat that the caller is typing',
  description:
    'Sends an `event: typing` frame to the live streams of the chat’s other members, on every gateway node that shares a PostgreSQL gateway database; ' +
    'nothing is stored. At most three signals per chat every 6 s. See docs/events.md.',
  body: Type.Object({ chat_id: ChatId }, { additionalProperties: false }),
  response: {
    200: Type.Object({ chat_id: Type.String(), expires_ms: Type.Integer() }),
  },
}

const presenceSchema = {
  summary: 'Which members of a chat have a live connection',
  description: 'Members of the chat and whether each has an event stream open (or had one within 15 s).',
  querystring: Type.Object({ chat_id: ChatId }, { additionalProperties: false }),
  response: {
    200: Type.Object({
      chat_id: Type.String(),
      members: Type.Array(Type.Object({ member: Type.String(), online: Type.Boolean() })),
    }),
  },
}

/**
 * `POST /auth/v1/typing` and `GET /auth/v1/presence` (beyond the spec, issue 16): typing indicators
 * and presence over the SSE streams, without a database write. Both are for members of the chat
 * only, checked with the chat module at every call.
 */
export default async function signalsPlugin(
  app: Service,
  { hub, presence, membersFor, now = Date.now, node, link, usage }: SignalsPluginOptions,
) {
  node?.on('typing', ({ members, chunk }) => hub.signal(members, toChunk(chunk)))
  // Counted across every gateway process that shares `usage`, so Workers or a second node do not
  // multiply the allowance.
  const shared = usage ? shareUsage(usage) : undefined
  const typingWindow = createFixedWindow<string>(
    TYPING_PER_WINDOW,
    TYPING_WINDOW_MS / 1000,
    now,
    shared?.counter(TYPING_SCOPE),
  )
  shared?.count({ [TYPING_SCOPE]: typingWindow })
  if (shared) app.addHook('onClose', async () => shared.close())

  // Before the schema, so that an anonymous caller is told to sign in rather than what is missing.
  async function requirePerson(request: { caller: { crmId: number } }): Promise<void> {
    if (request.caller.crmId === 0)
      throw new ApiError('SessionRequired', 'Typing and presence need a signed-in person.')
  }

  app.post('/typing', { schema: typing, onRequest: requirePerson }, async (request, reply) => {
    const { crmId } = request.caller
    const { chat_id } = request.body
    // Counted before the chat module is asked, so a caller past the limit costs it nothing (a
    // refused non-member's signals count too).
    const retryAfterSeconds = typingWindow.take(`${crmId}:${chat_id}`)
    if (retryAfterSeconds > 0) {
      reply.header('retry-after', String(retryAfterSeconds))
      throw new ApiError(
        'RateLimited',
        `at most ${TYPING_PER_WINDOW} typing signals per chat every ${TYPING_WINDOW_MS / 1000} s`,
      )
    }
    const members = await membersFor(chat_id, crmId)
    const data = { chat_id, user: String(crmId), expires_ms: TYPING_EXPIRES_MS }
    const others = members.filter((member) => member !== crmId)
    const frame = `event: typing\ndata: ${JSON.stringify(data)}\n\n`
    hub.signal(others, toChunk(frame))
    // The members' streams may be held by the node's other workers, or by other gateway nodes.
    if (link) link.publish({ members: others, chunk: frame })
    else node?.publish({ kind: 'typing', members: others, chunk: frame })
    return { chat_id, expires_ms: TYPING_EXPIRES_MS }
  })

  app.get('/presence', { schema: presenceSchema, onRequest: requirePerson }, async (request) => {
    const { crmId } = request.caller
    const { chat_id } = request.query
    const members = await membersFor(chat_id, crmId)
    return {
      chat_id,
      members: members.map((member) => ({ member: String(member), online: presence.online(member) })),
    }
  })
}
