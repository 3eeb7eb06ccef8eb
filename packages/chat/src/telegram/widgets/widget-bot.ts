import { ApiError } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { TelegramSettings } from '../telegram.config.ts'
import type { TelegramRepository } from '../telegram.repository.ts'
import type { CommandChat, TelegramBot } from '../telegram-bot.ts'
import type { StatName, StatsReader } from './widget-stats.ts'
import type { WidgetsRepository, WidgetView } from './widgets.repository.ts'
import { BUILT_IN_WIDGETS, clockTime, mayView, renderWidget, type Widget } from './widgets.ts'

/** How often the refresher looks for due widget messages. */
const TICK_MS = 1_000
/** Most widget messages refreshed in one tick; the rest wait for the next. */
const BATCH = 50
/** How long a refresh holds its claim on a message: past it, another instance may refresh it. */
const CLAIM_MS = 60_000

export interface WidgetBotOptions {
  bot: TelegramBot
  links: TelegramRepository
  widgets: WidgetsRepository
  /** A person's scopes as the gateway's profile sync last sent them. */
  scopesOf: (member: number) => Promise<string[]>
  readStats: StatsReader
  settings: TelegramSettings['Widgets']
  log: FastifyBaseLogger
  now: () => number
}

const replies = {
  notLinked:
    'Widgets are for linked accounts. Open your account page in the web client and choose "Link Telegram" first.',
  privateOnly: 'Please open a private chat with me to see widgets.',
  none: 'There are no widgets for you yet.',
  usage: 'Send /widget <name>, for example /widget today. /widgets lists the names.',
  unknown: (name: string) => `There is no widget "${name}" for you. /widgets lists the ones you may see.`,
}

/** The last words of a live message a newer widget message replaced. */
const REPLACED = 'No longer refreshed: a newer widget message replaced it.'

/** A widget's name, checked before it appears in a reply. */
const SHOWN_NAME = /^[a-z][a-z0-9_]{0,31}$/

/**
 * The bot's widgets: /widgets lists the ones a linked person may see, /widget <name> posts one
 * and keeps it fresh by editing that message at the widget's interval while it is live
 * (Telegram.Widgets.LiveHours), until a newer widget message replaces it, the person loses the
 * widget's scope or their link, or the widget is deleted. Live messages are rows of
 * telegram_widget_views, so a restart resumes refreshing them.
 */
export function createWidgetBot({ bot, links, widgets, scopesOf, readStats, settings, log, now }: WidgetBotOptions) {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let stopped = true
  const lanes = new Map<number, Promise<unknown>>()

  /**
   * Runs `work` after the earlier work of the same Telegram chat: a refresh's edit and the last
   * edit of the message a newer one replaces never cross, so a refresh under way cannot overwrite
   * "No longer refreshed" with values that will never be refreshed again.
   */
  function inLane<T>(telegramChatId: number, work: () => Promise<T>): Promise<T> {
    const run = (lanes.get(telegramChatId) ?? Promise.resolve()).then(work)
    const settled = run.catch(() => {})
    lanes.set(telegramChatId, settled)
    void settled.then(() => {
      if (lanes.get(telegramChatId) === settled) lanes.delete(telegramChatId)
    })
    return run
  }

  function builtIns(): Widget[] {
    return BUILT_IN_WIDGETS.map((widget) => ({ ...widget, refreshSeconds: settings.RefreshSeconds, builtIn: true }))
  }

  /** A widget by name: a built-in one, or a custom one from the database. */
  async function widgetNamed(name: string): Promise<Widget | undefined> {
    const builtIn = builtIns().find((widget) => widget.name === name)
    if (builtIn) return builtIn
    const custom = await widgets.find(name)
    return custom && { ...custom, builtIn: false }
  }

  /** The widgets a person may see, built-in ones first. */
  async function visibleTo(member: number): Promise<Widget[]> {
    const scopes = await scopesOf(member)
    const custom = (await widgets.list()).map((widget) => ({ ...widget, builtIn: false }))
    return [...builtIns(), ...custom].filter((widget) => mayView(widget, scopes))
  }

  async function linkedMember(chat: CommandChat): Promise<number | undefined> {
    if (!chat.private) {
      await bot.sendText(chat.id, replies.privateOnly)
      return undefined
    }
    const link = await links.linkOfChat(chat.id)
    if (!link) await bot.sendText(chat.id, replies.notLinked)
    return link?.member
  }

  async function listWidgets(chat: CommandChat): Promise<void> {
    const member = await linkedMember(chat)
    if (member === undefined) return
    const visible = await visibleTo(member)
    if (visible.length === 0) return void (await bot.sendText(chat.id, replies.none))
    const lines = visible.map((widget) => `/widget ${widget.name}: ${widget.title}`)
    await bot.sendText(chat.id, `Your widgets:\n${lines.join('\n')}`)
  }

  async function showWidget(chat: CommandChat, args: string): Promise<void> {
    const member = await linkedMember(chat)
    if (member === undefined) return
    const name = args.toLowerCase()
    if (name === '') return void (await bot.sendText(chat.id, replies.usage))
    const widget = SHOWN_NAME.test(name) ? await widgetNamed(name) : undefined
    // An admin widget someone may not see is answered as if it did not exist.
    if (!widget || !mayView(widget, await scopesOf(member)))
      return void (await bot.sendText(chat.id, replies.unknown(SHOWN_NAME.test(name) ? name : args.slice(0, 32))))
    const at = now()
    const messageId = await bot.sendText(chat.id, await renderWidget(widget, readStats, at))
    await inLane(chat.id, async () => {
      const replaced = await widgets.putView({
        telegramChatId: chat.id,
        member,
        widget: widget.name,
        messageId,
        liveUntil: at + settings.LiveHours * 3_600_000,
        nextRefresh: at + widget.refreshSeconds * 1000,
      })
      if (replaced) await finish(replaced, REPLACED)
    })
  }

  /** Edits a view's message one last time (best effort) and forgets the view. */
  async function finish(view: WidgetView, text: string): Promise<void> {
    await widgets.endView(view)
    try {
      await bot.editText(view.telegramChatId, view.messageId, text)
    } catch (error) {
      log.info({ member: view.member, failure: String(error) }, 'Telegram widget: the last edit failed')
    }
  }

  /**
   * A reader for one refresh round: each stat is computed once however many live messages show it,
   * so the cost of a round grows with the stats in use, not with the people watching.
   */
  function roundReader(): StatsReader {
    const values = new Map<StatName, Promise<string>>()
    return async (names, at) => {
      const wanted = [...new Set(names)]
      for (const name of wanted)
        if (!values.has(name))
          values.set(
            name,
            readStats([name], at).then((read) => read.get(name) ?? ''),
          )
      return new Map(await Promise.all(wanted.map(async (name) => [name, await values.get(name)!] as const)))
    }
  }

  /**
   * Refreshes a due view, unless another chat instance took it first or a newer message replaced
   * it since it was read (`claim`).
   */
  function refresh(view: WidgetView, read: StatsReader): Promise<void> {
    return inLane(view.telegramChatId, async () => {
      if (!(await widgets.claim(view, now() + CLAIM_MS))) return
      await refreshLive(view, read)
    })
  }

  async function refreshLive(view: WidgetView, read: StatsReader): Promise<void> {
    const at = now()
    const fresh = `Send /widget ${view.widget} for a fresh one.`
    const link = await links.linkOfChat(view.telegramChatId)
    if (link?.member !== view.member)
      return finish(view, 'No longer refreshed: this Telegram account is not linked any more.')
    const widget = await widgetNamed(view.widget)
    if (!widget) return finish(view, `No longer refreshed: the widget "${view.widget}" was deleted.`)
    if (!mayView(widget, await scopesOf(view.member)))
      return finish(view, `${widget.title}\n\nNo longer shown: your account does not have the scope this widget needs.`)
    const text = await renderWidget(widget, read, at)
    if (at >= view.liveUntil) {
      return finish(view, `${text}\n\nLive until ${clockTime(view.liveUntil)}; no longer refreshed. ${fresh}`)
    }
    try {
      await bot.editText(view.telegramChatId, view.messageId, text)
    } catch (error) {
      // The message or the chat is gone (deleted, bot blocked): nothing left to refresh.
      if (error instanceof ApiError && error.name !== 'TelegramUnavailable') return void (await widgets.endView(view))
      log.warn({ member: view.member, failure: String(error) }, 'Telegram widget: refresh failed; retrying later')
    }
    // Another chat instance may have replaced this view while the edit was under way, and its
    // notice may have reached Telegram first (the lane orders edits within one instance only).
    const current = await widgets.viewOf(view.telegramChatId)
    if (current && current.messageId !== view.messageId) return finish(view, REPLACED)
    await widgets.reschedule(view, at + widget.refreshSeconds * 1000)
  }

  async function tick(): Promise<void> {
    try {
      const read = roundReader()
      for (const view of await widgets.due(now(), BATCH)) {
        if (stopped) return
        await refresh(view, read).catch((error) =>
          log.error({ member: view.member, failure: String(error) }, 'Telegram widget: refresh failed'),
        )
      }
    } catch (error) {
      log.error({ failure: String(error) }, 'Telegram widgets: reading due widgets failed')
    }
  }

  function schedule(): void {
    if (stopped) return
    timer = setTimeout(() => {
      running = tick().finally(() => {
        running = undefined
        schedule()
      })
    }, TICK_MS)
    timer.unref()
  }

  bot.addCommand('widgets', listWidgets)
  bot.addCommand('widget', showWidget)

  return {
    visibleTo,
    /** Starts refreshing live widget messages (when Telegram.Widgets.Refresh is on). */
    start(): void {
      if (!settings.Refresh || !stopped) return
      stopped = false
      schedule()
    },
    async stop(): Promise<void> {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}
