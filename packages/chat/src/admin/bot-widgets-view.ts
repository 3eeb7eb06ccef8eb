import { timetickTime } from '@atrium/platform'
import { adminTime, emptyState, html, renderAdminPage } from '@atrium/platform/admin'
import { STATS } from '../telegram/widgets/widget-stats.ts'
import type { CustomWidget } from '../telegram/widgets/widgets.repository.ts'
import { MAX_REFRESH_SECONDS, TEMPLATE_MAX, TITLE_MAX, type Widget } from '../telegram/widgets/widgets.ts'
import { NAV } from './admin-shell.ts'

export const PAGE_PATH = '/ChatAdmin/BotWidgets'

/** What the form holds: an operator's entry, as typed. */
export interface WidgetForm {
  name: string
  title: string
  template: string
  scope: string
  refresh_seconds: string
}

export interface BotWidgetsView {
  builtIn: Array<{ widget: Widget; body: string }>
  custom: CustomWidget[]
  /** Names of the people who last changed the custom widgets, as shown: "Alice Archer (891241565626240)". */
  changedBy: Map<number, string>
  /** The form: a new widget, or an existing one being edited. */
  form: WidgetForm
  editing: boolean
  minRefreshSeconds: number
  preview?: string | undefined
  notice?: { text: string; error?: boolean } | undefined
}

function who(scope: string) {
  return scope === '' ? html`<span class="muted">everyone linked</span>` : html`scope <code>${scope}</code>`
}

function seconds(value: number): string {
  if (value % 3600 === 0) return `${value / 3600} h`
  if (value % 60 === 0) return `${value / 60} min`
  return `${value} s`
}

function widgetForm(view: BotWidgetsView) {
  const { form, editing, minRefreshSeconds } = view
  const action = editing ? `${PAGE_PATH}/edit` : `${PAGE_PATH}/create`
  return html`<form method="post" action=${action} class="filters" aria-labelledby="form-title">
    <label for="widget-name">Name
      ${
        editing
          ? html`<input id="widget-name" name="name" value=${form.name} readonly />`
          : html`<input id="widget-name" name="name" value=${form.name} required pattern="[a-z][a-z0-9_]{0,31}" maxlength="32" placeholder="open_chats" />`
      }
    </label>
    <label for="widget-title">Title
      <input id="widget-title" name="title" value=${form.title} required maxlength=${TITLE_MAX} placeholder="Support today" />
    </label>
    <label for="widget-scope">Required scope (empty: everyone linked)
      <input id="widget-scope" name="scope" value=${form.scope} maxlength="64" placeholder="admin" />
    </label>
    <label for="widget-refresh">Refresh every (seconds, ${minRefreshSeconds}–${MAX_REFRESH_SECONDS})
      <input id="widget-refresh" name="refresh_seconds" type="number" min=${minRefreshSeconds} max=${MAX_REFRESH_SECONDS} value=${form.refresh_seconds} required />
    </label>
    <label for="widget-template">Template: text with {stat_name} placeholders
      <textarea id="widget-template" name="template" rows="5" cols="60" required maxlength=${TEMPLATE_MAX}>${form.template}</textarea>
    </label>
    <button type="submit" class="secondary" formaction=${`${PAGE_PATH}/preview`}>Preview</button>
    <button type="submit">${editing ? 'Save changes' : 'Create widget'}</button>
    ${editing && html`<input type="hidden" name="mode" value="edit" /><a href=${PAGE_PATH}>Cancel</a>`}
  </form>`
}

/** The /ChatAdmin/BotWidgets page. */
export function renderBotWidgetsPage(view: BotWidgetsView): string {
  const body = html`
    <p>
      ${'People with a linked Telegram account send the bot '}<code>/widgets</code>${' for the list and '}
      <code>/widget name</code>${' for one; the bot keeps that message fresh at the widget’s interval.'}
    </p>
    <h2>Built-in widgets</h2>
    <table>
      <thead><tr><th>Name</th><th>Title</th><th>Shown to</th><th class="num">Refresh</th><th>Shows now</th></tr></thead>
      <tbody>
        ${view.builtIn.map(
          ({ widget, body }) => html`<tr>
            <td><code>${widget.name}</code></td>
            <td>${widget.title}</td>
            <td>${who(widget.scope)}</td>
            <td class="num">${seconds(widget.refreshSeconds)}</td>
            <td><pre>${body}</pre></td>
          </tr>`,
        )}
      </tbody>
    </table>
    <h2>Custom widgets</h2>
    ${
      view.custom.length === 0
        ? emptyState(
            'No custom widgets yet. Define one with the form below: a title and a template over the stats listed at the end of this page.',
          )
        : html`<table>
          <thead><tr><th>Name</th><th>Title</th><th>Shown to</th><th class="num">Refresh</th><th>Template</th><th>Last changed</th><th>Actions</th></tr></thead>
          <tbody>
            ${view.custom.map(
              (widget) => html`<tr>
                <td><code>${widget.name}</code></td>
                <td>${widget.title}</td>
                <td>${who(widget.scope)}</td>
                <td class="num">${seconds(widget.refreshSeconds)}</td>
                <td><pre>${widget.template}</pre></td>
                <td>${view.changedBy.get(widget.updatedBy) ?? ''}<br /><span class="muted">${widget.timetickUpdate > 0 && adminTime(timetickTime(widget.timetickUpdate))}</span></td>
                <td>
                  <a href=${`${PAGE_PATH}?Edit=${encodeURIComponent(widget.name)}`} aria-label=${`Edit ${widget.name}`}>Edit</a>${' '}
                  <form class="inline" method="post" action=${`${PAGE_PATH}/delete`}>
                    <input type="hidden" name="name" value=${widget.name} />
                    <button type="submit" class="danger" aria-label=${`Delete ${widget.name}`}>Delete</button>
                  </form>
                </td>
              </tr>`,
            )}
          </tbody>
        </table>`
    }
    <h2 id="form-title">${view.editing ? `Edit widget ${view.form.name}` : 'New widget'}</h2>
    ${widgetForm(view)}
    ${
      view.preview !== undefined &&
      html`<h2>Preview</h2><p class="muted">As the bot would post it now:</p><pre class="card" aria-label="Preview">${view.preview}</pre>`
    }
    <h2>Stats a template may use</h2>
    <table>
      <thead><tr><th>Placeholder</th><th>Value</th></tr></thead>
      <tbody>
        ${Object.entries(STATS).map(
          ([name, stat]) => html`<tr><td><code>{${name}}</code></td><td>${stat.description}</td></tr>`,
        )}
      </tbody>
    </table>`
  return renderAdminPage({
    panel: 'Atrium chat',
    title: 'Bot widgets',
    nav: NAV,
    current: PAGE_PATH,
    body,
    notice: view.notice,
  })
}
