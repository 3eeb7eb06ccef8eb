import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'

/** A bot token of the form @BotFather gives, for tests. */
export const BOT_TOKEN = '7012345678:AAF-test_token-0123456789abcdefghijk'
export const BOT_USERNAME = 'atrium_test_bot'

/** One Bot API call the server received, with its decoded parameters. */
export interface BotApiCall {
  method: string
  /** The token in the path. */
  token: string
  params: Record<string, unknown>
  contentType: string
  /** When it arrived (epoch ms). */
  at: number
}

interface Waiter {
  offset: number
  respond: () => void
}

/**
 * A local server speaking the Telegram Bot API as documented (https://core.telegram.org/bots/api):
 * `POST <root>/bot<token>/<method>` with a JSON body, answered `{ok, result}` or
 * `{ok:false, error_code, description}`. It implements getMe, sendMessage, editMessageText,
 * setWebhook, deleteWebhook and getUpdates (long polling with offset and timeout), refuses any other token
 * with 401, and records every call so tests check what our client sent.
 */
export async function startBotApi(t: TestContext, { token = BOT_TOKEN } = {}) {
  const calls: BotApiCall[] = []
  /** Chat ids whose user blocked the bot: sendMessage answers 403 as Telegram does. */
  const blocked = new Set<number>()
  const updates: Array<{ update_id: number } & Record<string, unknown>> = []
  const waiters = new Set<Waiter>()
  /** The current text of every message sent, by `<chat id>:<message id>`. */
  const messages = new Map<string, string>()
  /** Every message sent, in order, with the id the server gave it. */
  const sent: Array<{ chatId: number; messageId: number; text: string }> = []
  let nextMessageId = 1
  let nextUpdateId = 1000
  let webhook = ''
  /**
   * `down`: every method fails as if Telegram were down (HTTP 502 without a JSON body);
   * `retryAfter`: sendMessage answers 429 Too Many Requests with that retry_after.
   */
  const state = { down: false, retryAfter: 0 }
  /** Set by holdNext: the next call of a method waits for `gate`, then tells `applied`. */
  const held = new Map<string, { gate: Promise<void>; applied: () => void }>()

  /** Waits while a call of `method` is held; settles `applied` once the call took effect. */
  async function passHold(method: string): Promise<void> {
    const hold = held.get(method)
    if (!hold) return
    held.delete(method)
    await hold.gate
    setImmediate(hold.applied)
  }

  function answer(response: ServerResponse, status: number, body: object) {
    response.writeHead(status, { 'content-type': 'application/json' })
    response.end(JSON.stringify(body))
  }
  const fail = (response: ServerResponse, code: number, description: string) =>
    answer(response, code, { ok: false, error_code: code, description })
  const ok = (response: ServerResponse, result: unknown) => answer(response, 200, { ok: true, result })

  function pending(offset: number) {
    return updates.filter((update) => update.update_id >= offset)
  }

  async function readParams(request: IncomingMessage): Promise<Record<string, unknown>> {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString('utf8')
    if (text === '') return {}
    return JSON.parse(text) as Record<string, unknown>
  }

  const server = createServer(async (request, response) => {
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(request.url ?? '')
    if (!match) return fail(response, 404, 'Not Found')
    const [, given, method] = match as unknown as [string, string, string]
    const params = await readParams(request)
    calls.push({
      method,
      token: given,
      params,
      contentType: String(request.headers['content-type'] ?? ''),
      at: Date.now(),
    })
    if (given !== token) return fail(response, 401, 'Unauthorized')
    if (state.down) {
      response.writeHead(502)
      return response.end('Bad Gateway')
    }
    switch (method) {
      case 'getMe':
        return ok(response, {
          id: Number(token.split(':')[0]),
          is_bot: true,
          first_name: 'Atrium Test',
          username: BOT_USERNAME,
          can_join_groups: false,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
        })
      case 'sendMessage': {
        await passHold(method)
        const chatId = Number(params.chat_id)
        const text = params.text
        if (!Number.isSafeInteger(chatId) || typeof text !== 'string' || text.length === 0)
          return fail(response, 400, 'Bad Request: message text is empty')
        if (blocked.has(chatId)) return fail(response, 403, 'Forbidden: bot was blocked by the user')
        if (state.retryAfter > 0)
          return answer(response, 429, {
            ok: false,
            error_code: 429,
            description: `Too Many Requests: retry after ${state.retryAfter}`,
            parameters: { retry_after: state.retryAfter },
          })
        if (params.parse_mode === 'HTML' && /<(?!\/?(b|i|u|s|a|code|pre)\b)/.test(text))
          return fail(response, 400, "Bad Request: can't parse entities: Unsupported start tag")
        const messageId = nextMessageId++
        messages.set(`${chatId}:${messageId}`, text)
        sent.push({ chatId, messageId, text })
        return ok(response, {
          message_id: messageId,
          date: Math.floor(Date.now() / 1000),
          chat: { id: chatId, type: 'private' },
          text,
        })
      }
      case 'editMessageText': {
        await passHold(method)
        const key = `${Number(params.chat_id)}:${Number(params.message_id)}`
        const text = params.text
        if (typeof text !== 'string' || text.length === 0)
          return fail(response, 400, 'Bad Request: message text is empty')
        if (blocked.has(Number(params.chat_id))) return fail(response, 403, 'Forbidden: bot was blocked by the user')
        const before = messages.get(key)
        if (before === undefined) return fail(response, 400, 'Bad Request: message to edit not found')
        if (before === text)
          return fail(
            response,
            400,
            'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
          )
        messages.set(key, text)
        return ok(response, {
          message_id: Number(params.message_id),
          date: Math.floor(Date.now() / 1000),
          edit_date: Math.floor(Date.now() / 1000),
          chat: { id: Number(params.chat_id), type: 'private' },
          text,
        })
      }
      case 'setWebhook':
        if (typeof params.url !== 'string' || !params.url.startsWith('https://'))
          return fail(response, 400, 'Bad Request: bad webhook: An HTTPS URL must be provided for webhook')
        webhook = params.url
        return ok(response, true)
      case 'deleteWebhook':
        webhook = ''
        return ok(response, true)
      case 'getUpdates': {
        if (webhook !== '') return fail(response, 409, "Conflict: can't use getUpdates method while webhook is active")
        const offset = Number(params.offset ?? 0)
        // Confirmed updates (below offset) are forgotten, as Telegram does.
        for (let i = updates.length - 1; i >= 0; i--) if (updates[i]!.update_id < offset) updates.splice(i, 1)
        const limit = Number(params.limit ?? 100)
        const send = () => ok(response, pending(offset).slice(0, limit))
        if (pending(offset).length > 0 || !params.timeout) return send()
        const waiter: Waiter = {
          offset,
          respond: () => {
            clearTimeout(timer)
            waiters.delete(waiter)
            send()
          },
        }
        const timer = setTimeout(waiter.respond, Number(params.timeout) * 1000)
        waiters.add(waiter)
        response.on('close', () => {
          clearTimeout(timer)
          waiters.delete(waiter)
        })
        return
      }
      default:
        return fail(response, 404, 'Not Found: method not found')
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    for (const waiter of waiters) waiter.respond()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  const root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  return {
    root,
    calls,
    blocked,
    state,
    /** The current text of a message the bot sent (after its edits). */
    sent,
    textOf: (chatId: number, messageId: number) => messages.get(`${chatId}:${messageId}`),
    /** The URL setWebhook registered, '' when none. */
    webhook: () => webhook,
    /** The calls of one method. */
    callsOf: (method: string) => calls.filter((call) => call.method === method),
    /**
     * Holds the next call of `method` (recorded when it arrives) until `release` is called: a slow
     * Telegram, to see what the bot does meanwhile. `applied` settles once the call took effect.
     */
    holdNext(method: 'sendMessage' | 'editMessageText') {
      let release = () => {}
      let applied = () => {}
      const gate = new Promise<void>((resolve) => {
        release = resolve
      })
      const done = new Promise<void>((resolve) => {
        applied = resolve
      })
      held.set(method, { gate, applied })
      return { release, applied: done }
    },
    /** Queues an update for getUpdates (long polling) and wakes a waiting poll. */
    push(update: Record<string, unknown>) {
      const queued = { update_id: nextUpdateId++, ...update }
      updates.push(queued)
      for (const waiter of [...waiters]) if (pending(waiter.offset).length > 0) waiter.respond()
      return queued
    },
  }
}

export type BotApi = Awaited<ReturnType<typeof startBotApi>>

/** A Telegram user for updates. */
export interface TelegramUser {
  id: number
  first_name: string
  last_name?: string
  username?: string
}

let nextUpdate = 1
/** A private-chat text message update from `user`, as Telegram sends it (commands carry a bot_command entity). */
export function messageUpdate(user: TelegramUser, text: string, chatType = 'private') {
  const command = /^\/[a-z_]+/.exec(text)
  return {
    update_id: nextUpdate++,
    message: {
      message_id: nextUpdate,
      date: Math.floor(Date.now() / 1000),
      from: { is_bot: false, ...user },
      chat:
        chatType === 'private'
          ? { id: user.id, type: 'private', first_name: user.first_name }
          : { id: -100_123, type: chatType, title: 'Some group' },
      text,
      ...(command ? { entities: [{ type: 'bot_command', offset: 0, length: command[0].length }] } : {}),
    },
  }
}

/** The secret the webhook tests register and send. */
export const WEBHOOK_SECRET = 'webhook-secret_0123456789abcdef'
