import { randomUUID } from 'node:crypto'
import { ChatMessFlags, ChatType, hasFlag, shownName } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { EventFeed } from '../events/event-feed.ts'
import type { ProfilesRepository } from '../profiles/profiles.repository.ts'
import type { Notice, NotificationsRepository } from './notifications.repository.ts'
import type { TelegramBot } from './telegram-bot.ts'

export interface TelegramNotifierOptions {
  notices: NotificationsRepository
  profiles: ProfilesRepository
  events: EventFeed
  bot: TelegramBot
  /** Telegram.NotifyIntervalSeconds. */
  intervalSeconds: number
  /** Telegram.ChatUrl: links go to `<chatUrl>c/<chat id>`; empty for none. */
  chatUrl: string
  log: FastifyBaseLogger
  now: () => number
  /**
   * How often events other chat instances wrote are looked for (this instance's wake it at once),
   * and a free lease is looked for while another instance sends.
   */
  pollMs?: number
}

/** How long the sending instance's lease lasts unless renewed; it is renewed at half of it. */
export const LEASE_MS = 30_000

/** A message older than this when its turn comes is not notified (a backlog after notifications were off). */
export const MAX_AGE_MS = 10 * 60_000

/** The NewChatMessage event data the notifier reads. */
interface MessageData {
  sender: string
  content: string
  flags: number
  file?: { name: string }
}

/** Longest message excerpt in a notification. */
const EXCERPT = 300

function excerptOf(message: MessageData): string {
  if (message.file) return `📎 ${message.file.name}`
  if (hasFlag(message.flags, ChatMessFlags.Call)) return '📞 Call'
  if (hasFlag(message.flags, ChatMessFlags.Widget)) return '🧩 Widget'
  const text = message.content.trim()
  return text.length > EXCERPT ? `${text.slice(0, EXCERPT - 1)}…` : text
}

/**
 * Chat notifications to Telegram: follows the event feed, and for each new message tells the
 * members (not its sender) who turned notifications on and have not read it yet, as plain text (so
 * no name or message can inject Telegram formatting) with the sender's name and a link to the chat.
 * At most one notification per person and chat per interval; the ones held back are counted in the
 * next.
 *
 * Every chat instance with notifications on runs one; they share a cursor and a lease in
 * telegram_state, so one sends at a time and each notice goes out at most once: the sender moves
 * the shared cursor before it sends what it read, and stops once another took the lease. Another
 * takes over when the lease was given back at stop, or ran out (LEASE_MS) because its holder died
 * or hung, and goes on from the shared cursor: a restart loses no notice, and messages older than
 * MAX_AGE_MS by then (notifications were off everywhere) are skipped rather than sent late.
 */
export function createTelegramNotifier(options: TelegramNotifierOptions) {
  const { notices, profiles, events, bot, intervalSeconds, chatUrl, log, now } = options
  const pollMs = options.pollMs ?? 2_000
  const throttle = new Map<string, { last: number; held: number }>()
  const me = randomUUID()
  let leading = false
  let leaseUntil = 0
  /** Where this instance has read to; the shared cursor follows it (see drain). */
  let cursor = 0
  let savedAt = 0
  let running: Promise<void> | undefined
  let again = false
  let stopped = false
  let stopListening = () => {}
  let poll: NodeJS.Timeout | undefined

  /** True when this notice goes out now; otherwise it is counted for the next one. */
  function admit(notice: Notice): { send: boolean; held: number } {
    if (intervalSeconds === 0) return { send: true, held: 0 }
    const key = `${notice.member}:${notice.chatId}`
    const state = throttle.get(key)
    const at = now()
    if (state && at - state.last < intervalSeconds * 1000) {
      state.held++
      return { send: false, held: 0 }
    }
    throttle.set(key, { last: at, held: 0 })
    return { send: true, held: state?.held ?? 0 }
  }

  function forget(): void {
    const at = now()
    for (const [key, state] of throttle)
      if (at - state.last >= intervalSeconds * 1000 && state.held === 0) throttle.delete(key)
  }

  /** True while this instance holds the lease: renews it at half its time, or takes it when free. */
  async function lead(): Promise<boolean> {
    const at = now()
    if (leading && leaseUntil - at > LEASE_MS / 2) return true
    let state = await notices.state()
    if (!state) {
      // The first run anywhere starts after the newest event: older messages are never notified.
      await notices.createState(await notices.head())
      state = await notices.state()
    }
    if (!state || (state.holder !== me && state.leaseUntil > at) || !(await notices.take(state, me, at + LEASE_MS))) {
      leading = false
      return false
    }
    // Taken from another (or given back by it): go on from where it got to.
    if (!leading || state.holder !== me) cursor = state.cursor
    leading = true
    leaseUntil = at + LEASE_MS
    return true
  }

  async function deliver(found: Notice[]): Promise<void> {
    const fresh = found.filter((notice) => now() - notice.sent <= MAX_AGE_MS)
    if (fresh.length < found.length)
      log.info({ skipped: found.length - fresh.length }, 'Telegram notifications: messages too old to notify skipped')
    const parsed = fresh
      .map((notice) => ({ notice, message: JSON.parse(notice.data) as MessageData }))
      // Reactions are ReactionChanged events, edits MessageEdited: only new messages come here.
      .filter(({ notice, message }) => String(notice.member) !== message.sender)
    if (parsed.length === 0) return
    const senders = [...new Set(parsed.map(({ message }) => Number(message.sender)))]
    const [names, chats] = await Promise.all([
      profiles.names(senders),
      notices.chats([...new Set(parsed.map(({ notice }) => notice.chatId))]),
    ])
    for (const { notice, message } of parsed) {
      const { send, held } = admit(notice)
      if (!send) continue
      const sender = shownName(Number(message.sender), names.get(Number(message.sender)))
      const chat = chats.get(notice.chatId)
      const place = !chat || chat.type === ChatType.Private ? '' : ` in ${chat.name || 'a group'}`
      const more = held > 0 ? ` (and ${held} earlier message${held === 1 ? '' : 's'})` : ''
      const link = chatUrl ? `\n\n${chatUrl}c/${notice.chatId}` : ''
      const text = `${sender}${place}${more}:\n${excerptOf(message)}${link}`
      try {
        await bot.sendText(notice.telegramChatId, text, { disableLinkPreview: true })
      } catch (error) {
        log.warn({ member: notice.member, failure: (error as Error).message }, 'Telegram notification not sent')
      }
    }
  }

  async function drain(): Promise<void> {
    do {
      again = false
      try {
        while (!stopped && (await lead())) {
          const { notices: found, upTo } = await notices.noticesAfter(cursor)
          if (upTo === cursor) break
          // The shared cursor moves before anything is sent, so nothing is sent twice; with nothing
          // to send it moves at most once per poll (a stop gives it back up to date).
          if (found.length > 0 || now() - savedAt >= pollMs) {
            if (!(await notices.advance(me, upTo, now() + LEASE_MS))) {
              leading = false
              break
            }
            savedAt = now()
            leaseUntil = savedAt + LEASE_MS
          }
          cursor = upTo
          await deliver(found)
        }
      } catch (error) {
        log.error({ failure: String(error) }, 'Telegram notifications: reading new messages failed')
      }
      forget()
    } while (again && !stopped)
  }

  function wake(): void {
    if (stopped) return
    if (running) {
      again = true
      return
    }
    running = drain().finally(() => {
      running = undefined
    })
  }

  return {
    /**
     * Takes the lease if it is free, then catches up in the background (a slow Bot API never holds
     * up the module's start); without the lease it looks for it at each poll.
     */
    async start(): Promise<void> {
      await lead().catch((error: unknown) => {
        log.error({ failure: String(error) }, 'Telegram notifications: reading the shared cursor failed')
      })
      wake()
      // This instance's own commits wake it while it sends; the poll covers everything else.
      stopListening = events.onSequenced(() => {
        if (leading) wake()
      })
      poll = setInterval(wake, pollMs)
      poll.unref()
    },

    /** Stops, and gives the lease back with the cursor reached so another instance goes on at once. */
    async stop(): Promise<void> {
      stopped = true
      stopListening()
      clearInterval(poll)
      await running
      if (!leading) return
      leading = false
      await notices.release(me, cursor).catch((error: unknown) => {
        log.warn({ failure: String(error) }, 'Telegram notifications: the lease was not given back')
      })
    },
  }
}
