import { type BroadcastEvent, ChatMessFlags, ChatType, hasAnyFlag, hasFlag, signedHeaders } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { ModuleInstances } from '../proxy/module-instances.ts'

/**
 * The payload of a push, as the service worker (/sw.js) reads it: the notification's title and
 * body, the same-origin path a click opens, and a tag under which a newer notification replaces
 * an older one (one per chat, one per wallet transaction).
 */
export interface PushMessage {
  title: string
  body: string
  url: string
  tag: string
  module: string
  type: string
  tick: number
}

/** What the chat module says of a chat: its type (1 private, 2 group, 4 info channel) and name. */
export interface ChatSummary {
  type: number
  name: string
}

/** Looks up what events do not carry: a chat's type and name (undefined when unknown), a user's display name. */
export interface PushLookups {
  chat(chatId: string): Promise<ChatSummary | undefined>
  userName(crmId: number): Promise<string>
}

const BODY_CHARS = 180
const NAME_CHARS = 60
// A message the client never shows, or one already gone, makes no notification.
const SILENT = ChatMessFlags.WidgetCommand | ChatMessFlags.Deleted

function clip(text: string, chars = BODY_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > chars ? `${flat.slice(0, chars - 1)}…` : flat
}

/**
 * A call row's words: its content is the call record (docs/calls.md), pushed when the call is
 * placed, so the person called sees who is calling while no tab is open.
 */
function callBody(content: unknown): string {
  try {
    const record = JSON.parse(String(content)) as { media?: unknown; state?: unknown }
    const kind = record.media === 'video' ? 'video call' : 'call'
    return record.state === 'ringing' ? `📞 Incoming ${kind}` : `📞 Missed ${kind}`
  } catch {
    return 'Call'
  }
}

function chatBody(data: Record<string, unknown>): string {
  const flags = Number(data.flags) || 0
  if (hasFlag(flags, ChatMessFlags.Call)) return callBody(data.content)
  const content = typeof data.content === 'string' ? clip(data.content) : ''
  const file = data.file as { name?: unknown } | undefined
  if (hasFlag(flags, ChatMessFlags.File) && typeof file?.name === 'string') {
    return content ? `📎 ${clip(file.name)}: ${content}` : `📎 ${clip(file.name)}`
  }
  return content || 'New message'
}

/**
 * The push for a NewChatMessage to `recipient`, or undefined when none is due (the recipient sent
 * it, or the client never shows it). A private chat opens the conversation with the peer,
 * `/chat/c/{peerCrmId}` (spec: "Chat client routes"): the peer is the sender, never the recipient.
 * Groups and channels open `/chat/c/{chatId}`. When the chat cannot be looked up, the messenger
 * (`/chat/`) opens instead of a guess.
 */
async function chatMessage(recipient: number, event: BroadcastEvent, lookups: PushLookups) {
  const { data } = event
  const sender = String(data.sender ?? '')
  const chatId = String(data.chat_id ?? '')
  if (!/^[1-9][0-9]*$/.test(sender) || !/^[1-9][0-9]*$/.test(chatId)) return undefined
  if (sender === String(recipient) || hasAnyFlag(Number(data.flags) || 0, SILENT)) return undefined
  const chat = await lookups.chat(chatId)
  const senderName = clip((await lookups.userName(Number(sender))) || 'Someone', NAME_CHARS)
  const body = chatBody(data)
  if (!chat) return { title: senderName, body, url: '/chat/', tag: `chat-${chatId}` }
  if (chat.type === ChatType.Private)
    return { title: senderName, body, url: `/chat/c/${sender}`, tag: `chat-${chatId}` }
  const title = clip(chat.name, NAME_CHARS) || 'New message'
  const shown = chat.type === ChatType.InfoChannel ? body : `${senderName}: ${body}`
  return { title, body: shown, url: `/chat/c/${chatId}`, tag: `chat-${chatId}` }
}

/**
 * Wallet transactions open `/wallet/tx/{id}` (the wallet frontend's transaction page); both of a
 * transaction's notifications share one tag, so a state change replaces the incoming one. The
 * amount is signed for the recipient of the event, so the payer's own TxInWallet (negative) is not
 * pushed, like the sender's own chat message. BalanceChanged follows every transaction and is left
 * to SSE.
 */
function walletMessage(event: BroadcastEvent) {
  const { data } = event
  const id = String(data.id ?? '')
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) return undefined
  if (event.type === 'TxInWallet' && !(typeof data.amount === 'number' && data.amount > 0)) return undefined
  const amount = typeof data.amount === 'number' ? `${data.amount} ${String(data.currency ?? '')}`.trim() : ''
  const title = event.type === 'TxInWallet' ? 'Incoming payment' : 'Transaction updated'
  return { title, body: clip(amount), url: `/wallet/tx/${id}`, tag: `wallet-tx-${id}` }
}

/** The push an event makes for one recipient, or undefined for events that are left to SSE. */
export async function pushMessageFor(
  recipient: number,
  event: BroadcastEvent,
  lookups: PushLookups,
): Promise<PushMessage | undefined> {
  let shown: Pick<PushMessage, 'title' | 'body' | 'url' | 'tag'> | undefined
  if (event.module === 'chat' && event.type === 'NewChatMessage') shown = await chatMessage(recipient, event, lookups)
  else if (event.module === 'wallet' && (event.type === 'TxInWallet' || event.type === 'TxStateChanged')) {
    shown = walletMessage(event)
  }
  return shown && { ...shown, module: event.module, type: event.type, tick: event.tick }
}

/** The test push of POST /auth/v1/notifications/test. */
export function testPushMessage(tick: number): PushMessage {
  return {
    title: 'Atrium',
    body: 'Notifications work on this device.',
    url: '/chat/',
    tag: 'test',
    module: 'gateway',
    type: 'Test',
    tick,
  }
}

const CACHE_MS = 5 * 60_000
const CACHE_ENTRIES = 10_000

/**
 * Remembers up to 10,000 answers for five minutes, oldest dropped first. It keeps the promise, so
 * the members of one busy group share one lookup instead of each making their own.
 */
function cached<K, V>(load: (key: K) => Promise<V>): (key: K) => Promise<V> {
  const entries = new Map<K, { value: Promise<V>; at: number }>()
  return (key) => {
    const entry = entries.get(key)
    if (entry && Date.now() - entry.at < CACHE_MS) return entry.value
    const value = load(key)
    entries.delete(key)
    entries.set(key, { value, at: Date.now() })
    if (entries.size > CACHE_ENTRIES) entries.delete(entries.keys().next().value!)
    value.catch(() => entries.get(key)?.value === value && entries.delete(key))
    return value
  }
}

export interface PushLookupsOptions {
  /** The chat module's instances (Modules.chat); undefined when there is none. */
  chat: ModuleInstances | undefined
  serviceSecret: string
  timeoutMs: number
  /** A user's display name from the gateway's users. */
  userName: (crmId: number) => Promise<string>
  log: FastifyBaseLogger
}

/**
 * The lookups of the push dispatcher, each answer kept five minutes. A chat's type and name come
 * from the chat module (`GET /private/v1/get_chat_info`, signed as the gateway): a chat's type
 * never changes, and a renamed group or user shows the old name for at most that long. A failed
 * call is logged and answers undefined, so the notification still goes out.
 */
export function createPushLookups({ chat, serviceSecret, timeoutMs, userName, log }: PushLookupsOptions): PushLookups {
  const base = chat?.url.replace(/\/+$/, '') ?? ''

  const fetchChat = cached(async (chatId: string): Promise<ChatSummary> => {
    const url = `${base}/private/v1/get_chat_info?chat_id=${chatId}`
    const response = await chat!.fetch(url, {
      headers: signedHeaders(serviceSecret, 'GET', url),
      signal: AbortSignal.timeout(timeoutMs),
    })
    if (response.status !== 200) {
      await response.body?.cancel()
      throw new Error(`get_chat_info answered ${response.status}`)
    }
    const { result } = (await response.json()) as { result?: { type?: unknown; name?: unknown } }
    if (typeof result?.type !== 'number') throw new Error('get_chat_info answered no chat type')
    return { type: result.type, name: typeof result.name === 'string' ? result.name : '' }
  })

  return {
    async chat(chatId) {
      if (!base) return undefined
      try {
        return await fetchChat(chatId)
      } catch (error) {
        log.warn({ chatId, err: error }, 'push: could not read the chat; the notification opens the messenger')
        return undefined
      }
    },
    userName: cached(userName),
  }
}
