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
  /** How often events other chat instances wrote are looked for (this instance's wake it at once). */
  pollMs?: number
}

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
 * Chat notifications to Telegram: follows the event feed from where it stood at start, and for
 * each new message tells the members (not its sender) who turned notifications on and have not
 * read it yet, as plain text (so no name or message can inject Telegram formatting) with the
 * sender's name and a link to the chat. At most one notification per person and chat per interval;
 * the ones held back are counted in the next.
 */
export function createTelegramNotifier(options: TelegramNotifierOptions) {
  const { notices, profiles, events, bot, intervalSeconds, chatUrl, log, now } = options
  const throttle = new Map<string, { last: number; held: number }>()
  let cursor = 0
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

  async function deliver(found: Notice[]): Promise<void> {
    const parsed = found
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
        for (;;) {
          const { notices: found, upTo } = await notices.noticesAfter(cursor)
          if (upTo === cursor) break
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
    /** Starts after the newest event: messages from before the start are never notified. */
    async start(): Promise<void> {
      cursor = await notices.head()
      stopListening = events.onSequenced(wake)
      poll = setInterval(wake, options.pollMs ?? 2_000)
      poll.unref()
    },

    async stop(): Promise<void> {
      stopped = true
      stopListening()
      clearInterval(poll)
      await running
    },
  }
}
