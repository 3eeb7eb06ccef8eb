import { ApiError } from '@atrium/platform'
import { isStatName, type StatName, type StatsReader } from './widget-stats.ts'

/** A widget as the bot shows it: built-in or defined by an operator. */
export interface Widget {
  name: string
  title: string
  template: string
  /** The scope a person needs; '' for everyone with a linked Telegram account. */
  scope: string
  refreshSeconds: number
  builtIn: boolean
}

/** What an operator enters for a custom widget. */
export interface WidgetInput {
  name: string
  title: string
  template: string
  scope: string
  refreshSeconds: number
}

/** The scope of the built-in admin widgets: the operators' scope (docs/telegram-widgets.md). */
export const ADMIN_SCOPE = 'admin'
export const WIDGET_NAME = /^[a-z][a-z0-9_]{0,31}$/
const SCOPE = /^[A-Za-z0-9_.:-]{1,64}$/
export const TITLE_MAX = 100
export const TEMPLATE_MAX = 2000
export const MAX_REFRESH_SECONDS = 86_400
const PLACEHOLDER = /\{([^{}]*)\}/g
// Templates are plain text over several lines; other control characters could break the message.
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters refused
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f]/
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters refused
const CONTROL_OR_NEWLINE = /[\u0000-\u001f\u007f]/

/** The seven built-in dashboards; their refresh interval is Telegram.Widgets.RefreshSeconds. */
export const BUILT_IN_WIDGETS: ReadonlyArray<Omit<Widget, 'refreshSeconds' | 'builtIn'>> = [
  {
    name: 'today',
    title: 'Today',
    template:
      'Messages: {messages_today} in {active_chats_today} chats\nNew members: {new_members_today}\nCalls: {calls_today}',
    scope: '',
  },
  {
    name: 'messages',
    title: 'Messages',
    template: 'Last hour: {messages_last_hour}\nToday: {messages_today}\nActive chats today: {active_chats_today}',
    scope: '',
  },
  { name: 'calls', title: 'Calls', template: 'Calls today: {calls_today}', scope: '' },
  {
    name: 'support',
    title: 'Support',
    template: 'Open escalations: {open_escalations}\nWaiting for an answer: {waiting_support_chats}',
    scope: ADMIN_SCOPE,
  },
  {
    name: 'deliveries',
    title: 'Deliveries',
    template: 'SMS sent today: {sms_sent_today}\nFailed deliveries today: {failed_deliveries_today}',
    scope: ADMIN_SCOPE,
  },
  {
    name: 'storage',
    title: 'File storage',
    template: 'Files: {files_stored}\nStorage used: {file_storage}',
    scope: ADMIN_SCOPE,
  },
  {
    name: 'people',
    title: 'People',
    template: 'People known: {people}\nNew members today: {new_members_today}\nTelegram links: {telegram_links}',
    scope: ADMIN_SCOPE,
  },
]

export function isBuiltInName(name: string): boolean {
  return BUILT_IN_WIDGETS.some((widget) => widget.name === name)
}

/** The `{stat_name}` placeholders of a template, in order of appearance. */
export function placeholdersOf(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((match) => match[1]!)
}

/**
 * Checks and normalizes an operator's widget (line breaks become `\n`, title and template are
 * trimmed); throws the ApiError naming the first problem.
 */
export function validateWidget(input: WidgetInput, minRefreshSeconds: number): WidgetInput {
  const name = input.name.trim()
  if (!WIDGET_NAME.test(name)) throw new ApiError('InvalidWidgetName')
  const title = input.title.trim()
  if (title === '' || title.length > TITLE_MAX || CONTROL_OR_NEWLINE.test(title))
    throw new ApiError('InvalidWidgetTemplate', `The title is 1–${TITLE_MAX} characters on one line.`)
  const template = input.template.replace(/\r\n?/g, '\n').trim()
  if (template === '' || template.length > TEMPLATE_MAX || CONTROL.test(template))
    throw new ApiError(
      'InvalidWidgetTemplate',
      `The template is 1–${TEMPLATE_MAX} characters of text (line breaks allowed, other control characters not).`,
    )
  const stray = template.replace(PLACEHOLDER, '')
  if (stray.includes('{') || stray.includes('}'))
    throw new ApiError('InvalidWidgetTemplate', 'Braces are only for placeholders such as {messages_today}.')
  const unknown = placeholdersOf(template).filter((placeholder) => !isStatName(placeholder))
  if (unknown.length > 0)
    throw new ApiError('InvalidWidgetTemplate', `Not a stat of the catalogue: {${unknown[0]}}.`, {
      placeholders: unknown,
    })
  const scope = input.scope.trim()
  if (scope !== '' && !SCOPE.test(scope)) throw new ApiError('InvalidWidgetScope')
  const refreshSeconds = input.refreshSeconds
  if (!Number.isInteger(refreshSeconds) || refreshSeconds < minRefreshSeconds || refreshSeconds > MAX_REFRESH_SECONDS)
    throw new ApiError(
      'InvalidWidgetRefresh',
      `The refresh interval is a whole number of seconds from ${minRefreshSeconds} to ${MAX_REFRESH_SECONDS}.`,
    )
  return { name, title, template, scope, refreshSeconds }
}

/** Whether a person holding `scopes` may see the widget. */
export function mayView(widget: Pick<Widget, 'scope'>, scopes: readonly string[]): boolean {
  return widget.scope === '' || scopes.includes(widget.scope)
}

/** A time as `04:31:07 UTC`. */
export function clockTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 19)} UTC`
}

/** The widget's body: its template with each placeholder replaced by the stat's current value. */
export async function renderBody(widget: Pick<Widget, 'template'>, readStats: StatsReader, now: number) {
  const names = placeholdersOf(widget.template).filter(isStatName) as StatName[]
  const values = await readStats(names, now)
  return widget.template.replace(PLACEHOLDER, (_, name: string) => values.get(name as StatName) ?? '')
}

/** The whole Telegram message of a widget: title, body, and when it was computed. */
export async function renderWidget(widget: Widget, readStats: StatsReader, now: number): Promise<string> {
  return `${widget.title}\n\n${await renderBody(widget, readStats, now)}\n\nUpdated ${clockTime(now)}`
}
