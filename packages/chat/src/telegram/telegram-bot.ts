import { ApiError } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import { Bot, Composer, type Context, GrammyError, HttpError } from 'grammy'
import type { Update, User } from 'grammy/types'
import type { TelegramSettings } from './telegram.config.ts'
import { hashLinkToken, type TelegramRepository } from './telegram.repository.ts'

/** Longest text Telegram accepts in one message (Bot API sendMessage: 1–4096 characters). */
export const TELEGRAM_TEXT_MAX = 4096
/** The start parameter of a deep link: up to 64 of A–Z, a–z, 0–9, `_` and `-` (Bot API "Deep linking"). */
const START_TOKEN = /^[A-Za-z0-9_-]{1,64}$/
const NAME_MAX = 200
// A name with control characters could break the layout of the account page.
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters removed
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]+/g
// Telegram announces new-member and blocked-bot changes as my_chat_member; both matter here.
const ALLOWED_UPDATES = ['message', 'my_chat_member'] as const
const POLL_RETRY_MS = 30_000
const CLIENT_TIMEOUT_SECONDS = 45
/** A text that Telegram has not taken in this time is reported unavailable (the gateway waits 15 s for a code). */
const SEND_TIMEOUT_MS = 10_000
const STOP_WAIT_MS = 5_000

export interface TelegramBotOptions {
  token: string
  settings: TelegramSettings
  links: TelegramRepository
  log: FastifyBaseLogger
  now: () => number
}

/** A Telegram chat a command came from. */
export interface CommandChat {
  id: number
  private: boolean
}

/** A command handler another capability adds (e.g. the widgets); `args` is the text after the command. */
export type CommandHandler = (chat: CommandChat, args: string) => Promise<unknown>

export interface SendOptions {
  parseMode?: 'HTML' | 'MarkdownV2'
  disableLinkPreview?: boolean
}

/** The Telegram name of a user as people read it, e.g. `Ada Lovelace (@ada)`, without control characters. */
export function telegramNameOf(user: User): string {
  const full = [user.first_name, user.last_name].filter(Boolean).join(' ')
  const name = user.username ? `${full} (@${user.username})` : full
  return name.replace(CONTROL_CHARACTERS, ' ').trim().slice(0, NAME_MAX)
}

const replies = {
  welcome:
    'Hello! I deliver sign-in codes and, if you want them, chat notifications.\n\nTo link this Telegram account, open your account page in the web client and choose "Link Telegram".',
  linked: (replaced: boolean) =>
    `Your account is now linked to this Telegram account${replaced ? ' (it replaces the one linked before)' : ''}. Sign-in codes can come here; chat notifications are off until you turn them on in the web client.\n\nSend /unlink to undo.`,
  relinked: 'This Telegram account is already linked to your account. Nothing changed.',
  expired: 'This link has expired. Open your account page and choose "Link Telegram" again for a fresh one.',
  unknown:
    'This link is not valid any more (each link works once). Open your account page and choose "Link Telegram" again.',
  taken:
    'This Telegram account is linked to another account. Send /unlink here first, then open a fresh link from your account page.',
  privateOnly: 'Please open a private chat with me to link your account.',
  unlinked: 'Done: this Telegram account is no longer linked. You will get no codes or notifications here.',
  notLinked: 'This Telegram account is not linked to any account.',
  help: 'Commands:\n/start: how to link your account\n/status: is this Telegram account linked?\n/unlink: remove the link\n/widgets: the live dashboards you may see\n/widget <name>: show one and keep it fresh',
  isLinked: 'This Telegram account is linked to an account. Send /unlink to remove the link.',
}

/**
 * Maps a failed Bot API call to our error: a blocked bot or a chat that is gone (403, or 400
 * "chat not found") also removes the link, since nothing will reach that person there again.
 */
async function refusalOf(
  error: unknown,
  chatId: number | undefined,
  links: TelegramRepository,
  log: FastifyBaseLogger,
) {
  if (error instanceof GrammyError) {
    const gone = error.error_code === 403 || (error.error_code === 400 && /chat not found/i.test(error.description))
    if (gone && chatId !== undefined) {
      const member = await links.unlinkChat(chatId)
      log.info({ member, reason: error.description }, 'Telegram: the chat is gone; its link was removed')
      return new ApiError('TelegramBlocked')
    }
    if (error.error_code === 400)
      return new ApiError('TelegramRejected', `Telegram refused the message: ${error.description}`)
    if (error.error_code === 401)
      log.error('Telegram: the Bot API refused the token (401); check TelegramBot with @BotFather')
    const retryAfter = error.parameters.retry_after
    return new ApiError(
      'TelegramUnavailable',
      retryAfter ? `Telegram asks to wait ${retryAfter} s before sending again.` : undefined,
    )
  }
  log.warn(
    { failure: error instanceof HttpError ? String(error.error) : String(error) },
    'Telegram: the Bot API did not answer',
  )
  return new ApiError('TelegramUnavailable')
}

/**
 * The chat module's Telegram bot (grammY): links people by `/start <token>`, sends texts, and
 * receives updates by long polling or through the webhook the caller routes to `handleUpdate`.
 */
export function createTelegramBot({ token, settings, links, log, now }: TelegramBotOptions) {
  // Above getUpdates' 30 s long poll; grammY's default (500 s) would hold a start or a send for minutes.
  const bot = new Bot(token, { client: { apiRoot: settings.ApiRoot, timeoutSeconds: CLIENT_TIMEOUT_SECONDS } })
  let ready: Promise<void> | undefined
  let retry: NodeJS.Timeout | undefined
  let stopped = false

  /** Fetches the bot's own user (getMe) once; retried on the next use after a failure. */
  function init(): Promise<void> {
    ready ??= bot.init().catch((error) => {
      ready = undefined
      throw error
    })
    return ready
  }

  async function linkByToken(ctx: Context, from: User, chatId: number, token: string) {
    if (!START_TOKEN.test(token)) return ctx.reply(replies.unknown)
    const use = await links.consumeToken(hashLinkToken(token), now())
    if (use.kind !== 'valid') return ctx.reply(replies[use.kind])
    const existing = await links.linkOfChat(chatId)
    if (existing?.member === use.member) return ctx.reply(replies.relinked)
    const bound = await links.bind(use.member, chatId, telegramNameOf(from), now())
    if (bound.kind === 'taken') return ctx.reply(replies.taken)
    log.info({ member: use.member }, 'Telegram account linked')
    return ctx.reply(replies.linked(bound.replaced))
  }

  bot.command('start', async (ctx) => {
    const from = ctx.from
    if (ctx.chat.type !== 'private' || !from) return ctx.reply(replies.privateOnly)
    const token = ctx.match.trim()
    if (token === '') return ctx.reply(replies.welcome)
    return linkByToken(ctx, from, ctx.chat.id, token)
  })
  bot.command('unlink', async (ctx) => {
    const member = await links.unlinkChat(ctx.chat.id)
    if (member !== undefined) log.info({ member }, 'Telegram account unlinked from Telegram')
    return ctx.reply(member === undefined ? replies.notLinked : replies.unlinked)
  })
  bot.command('status', async (ctx) =>
    ctx.reply((await links.linkOfChat(ctx.chat.id)) ? replies.isLinked : replies.notLinked),
  )
  bot.command('help', (ctx) => ctx.reply(replies.help))
  // Commands other capabilities add; registered here so they run before the catch-all reply below.
  const added = new Composer<Context>()
  bot.use(added)
  // A user who blocks the bot is "kicked" from its private chat: the link is of no use any more.
  bot.on('my_chat_member', async (ctx) => {
    const status = ctx.myChatMember.new_chat_member.status
    if (ctx.chat.type === 'private' && status === 'kicked') {
      const member = await links.unlinkChat(ctx.chat.id)
      if (member !== undefined) log.info({ member }, 'Telegram: the user blocked the bot; link removed')
    }
  })
  bot.on('message', (ctx) => (ctx.chat.type === 'private' ? ctx.reply(replies.help) : undefined))
  bot.catch(({ error }) => log.error({ failure: String(error) }, 'Telegram: handling an update failed'))

  async function startPolling(): Promise<void> {
    if (stopped) return
    try {
      await bot.start({ allowed_updates: [...ALLOWED_UPDATES], onStart: () => log.info('Telegram: long polling') })
    } catch (error) {
      if (stopped) return
      const conflict = error instanceof GrammyError && error.error_code === 409
      log.error(
        { failure: String(error) },
        conflict
          ? 'Telegram: another process receives this bot’s updates (a webhook or a second poller); retrying'
          : 'Telegram: polling stopped; retrying',
      )
      retry = setTimeout(() => void startPolling(), POLL_RETRY_MS)
      retry.unref()
    }
  }

  return {
    /** The bot's @username (getMe), for deep links. */
    async username(): Promise<string> {
      try {
        await init()
      } catch (error) {
        throw await refusalOf(error, undefined, links, log)
      }
      return bot.botInfo.username
    },

    /** Sends a text to a Telegram chat; returns Telegram's message id. Refusals become ApiErrors. */
    async sendText(chatId: number, text: string, options: SendOptions = {}): Promise<number> {
      try {
        const message = await bot.api.sendMessage(
          chatId,
          text,
          {
            ...(options.parseMode ? { parse_mode: options.parseMode } : {}),
            ...(options.disableLinkPreview ? { link_preview_options: { is_disabled: true } } : {}),
          },
          // grammY types its signal as the abort-controller shim's; node-fetch takes the native one.
          AbortSignal.timeout(SEND_TIMEOUT_MS) as unknown as Parameters<typeof bot.api.sendMessage>[3],
        )
        return message.message_id
      } catch (error) {
        throw await refusalOf(error, chatId, links, log)
      }
    },

    /** Adds a command (e.g. `widgets` for /widgets); its failures are logged like every update's. */
    addCommand(command: string, handle: CommandHandler): void {
      added.command(command, (ctx) =>
        handle({ id: ctx.chat.id, private: ctx.chat.type === 'private' }, ctx.match.trim()),
      )
    },

    /**
     * Replaces the text of a message the bot sent. Telegram's "message is not modified" counts as
     * done; other refusals become ApiErrors (a blocked bot also removes the link).
     */
    async editText(chatId: number, messageId: number, text: string): Promise<void> {
      try {
        await bot.api.editMessageText(
          chatId,
          messageId,
          text,
          {},
          AbortSignal.timeout(SEND_TIMEOUT_MS) as unknown as Parameters<typeof bot.api.editMessageText>[4],
        )
      } catch (error) {
        if (error instanceof GrammyError && /message is not modified/i.test(error.description)) return
        throw await refusalOf(error, chatId, links, log)
      }
    },

    /** Handles one update that came by webhook. */
    async handleUpdate(update: Update): Promise<void> {
      await init()
      await bot.handleUpdate(update)
    },

    /**
     * Starts receiving: registers the webhook, or starts long polling in the background. Resolves
     * when the webhook is registered or that failed (logged): the module serves everything else either way.
     */
    async start(): Promise<void> {
      if (settings.Updates === 'polling') {
        void startPolling()
        return
      }
      if (settings.Updates !== 'webhook') return
      try {
        await init()
        await bot.api.setWebhook(settings.WebhookUrl, {
          secret_token: settings.WebhookSecret,
          allowed_updates: [...ALLOWED_UPDATES],
        })
        log.info({ url: settings.WebhookUrl }, 'Telegram: webhook registered')
      } catch (error) {
        // The module still serves everything else; sends retry getMe on their own.
        log.error({ failure: String(error) }, 'Telegram: registering the webhook failed')
      }
    },

    /**
     * Stops long polling, confirming the last update to Telegram (waiting at most 5 s for that);
     * the webhook stays registered.
     */
    async stop(): Promise<void> {
      stopped = true
      clearTimeout(retry)
      if (!bot.isRunning()) return
      // Confirming the last update is a courtesy; an unreachable Bot API must not hold up shutdown.
      let timer: NodeJS.Timeout | undefined
      const giveUp = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, STOP_WAIT_MS)
      })
      await Promise.race([bot.stop().catch(() => undefined), giveUp])
      clearTimeout(timer)
    },
  }
}

export type TelegramBot = ReturnType<typeof createTelegramBot>
