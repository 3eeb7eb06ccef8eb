import { createHash } from 'node:crypto'
import htm from 'htm'
import { type ComponentChildren, h, type VNode } from 'preact'
import { render } from 'preact-render-to-string'

/**
 * Operator pages (the gateway's /ProxyAdmin/, the chat module's /ChatAdmin/) are rendered on the
 * server from `html` templates: htm over Preact, so every interpolated value is escaped unless it
 * is markup built by `html` itself. The pages need no script: filters are GET forms, actions are
 * POST forms, live pages refresh themselves with a meta refresh.
 */
export const html: (strings: TemplateStringsArray, ...values: unknown[]) => VNode = (
  htm as unknown as { bind(factory: typeof h): (strings: TemplateStringsArray, ...values: unknown[]) => VNode }
).bind(h)

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,sans-serif;color:#1d2430;background:#f5f6f8}
header{display:flex;flex-wrap:wrap;align-items:center;gap:.25rem 1rem;padding:.6rem 1.2rem;background:#1d2430;color:#fff}
header strong{margin-right:1rem}
header a{color:#c9d6f2;text-decoration:none;padding:.2rem .1rem}
header a[aria-current=page]{color:#fff;border-bottom:2px solid #7fa6ff}
main{padding:1rem 1.2rem 3rem;max-width:90rem}
h1{font-size:1.35rem;margin:.4rem 0 1rem}
h2{font-size:1.1rem;margin:1.6rem 0 .6rem}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #dde1e8}
th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid #e8ebf0;vertical-align:top}
th{background:#eef1f6;font-weight:600;font-size:.85rem}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tr:hover td{background:#f8faff}
form.filters{display:flex;flex-wrap:wrap;align-items:flex-end;gap:.6rem 1rem;margin:0 0 1rem;padding:.8rem;background:#fff;border:1px solid #dde1e8}
form.filters label{display:flex;flex-direction:column;font-size:.8rem;color:#4a5363}
input,select,textarea,button{font:inherit}
input,select,textarea{padding:.3rem .4rem;border:1px solid #b8c0cc;border-radius:.25rem;background:#fff}
button{padding:.35rem .9rem;border:0;border-radius:.25rem;background:#2457c5;color:#fff;cursor:pointer}
button.secondary{background:#e4e8ef;color:#1d2430}
button.danger{background:#b3261e}
form.inline{display:inline}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(12rem,1fr));gap:.8rem;margin-bottom:1rem}
.card{background:#fff;border:1px solid #dde1e8;padding:.8rem}
.card .value{font-size:1.6rem;font-weight:600}
.card .label{color:#4a5363;font-size:.85rem}
.notice{padding:.6rem .8rem;margin:0 0 1rem;background:#e7f4ea;border:1px solid #a9d5b3}
.notice.error{background:#fbe9e7;border-color:#e6a59f}
.muted{color:#5c6470}
.pager{margin-top:.8rem}
.empty{padding:1rem;background:#fff;border:1px dashed #b8c0cc;color:#4a5363}
dl.fields{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem;background:#fff;border:1px solid #dde1e8;padding:.8rem}
dl.fields dt{color:#4a5363}
dl.fields dd{margin:0}
code{font-size:.9em;overflow-wrap:anywhere}
pre{margin:0;font-size:.9em;white-space:pre-wrap;overflow-wrap:anywhere}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
`.trim()

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64')

/**
 * The Content-Security-Policy of every operator page: no script at all, the one stylesheet by
 * its hash, forms only to this origin, never framed.
 */
export const ADMIN_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${STYLE_HASH}'`,
  "img-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ')

export interface AdminNavItem {
  href: string
  label: string
}

export interface AdminPageOptions {
  /** The panel's name in the header, e.g. "Atrium gateway". */
  panel: string
  title: string
  nav: AdminNavItem[]
  /** The nav item's href of this page, marked as the current page. */
  current: string
  body: ComponentChildren
  /** One line of feedback after an action, e.g. "Route /msg/ saved." */
  notice?: { text: string; error?: boolean } | undefined
  /** A live monitor's refresh, which the operator turns on and off (absent: the page has none). */
  live?: LiveRefresh | undefined
}

/**
 * The refresh of a live page (escalations, the STUN monitor). It is off until the operator turns it
 * on, since a page that reloads by itself moves focus and the reading place under people using a
 * screen reader or the keyboard (WCAG 2.2.1: timing a person can stop or never start).
 */
export interface LiveRefresh {
  seconds: number
  on: boolean
  /** The page's address with the refresh on (`true`) or off. */
  href(on: boolean): string
}

/** The query parameter that turns a page's live refresh on: `Live=1`. */
export const LIVE_PARAM = 'Live'

/** The live refresh of the page at `path` with `query`, on when the query says `Live=1`. */
export function liveRefresh(path: string, query: Record<string, string | undefined>, seconds: number): LiveRefresh {
  return {
    seconds,
    on: query[LIVE_PARAM] === '1',
    href: (on) => adminHref(path, { ...query, [LIVE_PARAM]: on ? '1' : undefined }),
  }
}

/** A whole operator page as an HTML document. */
export function renderAdminPage(options: AdminPageOptions): string {
  const { panel, title, nav, current, body, notice, live } = options
  const page = html`<html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="same-origin" />
      ${live?.on && html`<meta http-equiv="refresh" content=${String(live.seconds)} />`}
      <title>${title} · ${panel}</title>
      <style>${STYLE}</style>
    </head>
    <body>
      <header>
        <strong>${panel}</strong>
        <nav aria-label="Sections">
          ${nav.map(
            (item) =>
              html`<a href=${item.href} aria-current=${item.href === current ? 'page' : undefined}>${item.label}</a> `,
          )}
        </nav>
      </header>
      <main>
        <h1>${title}</h1>
        ${
          live &&
          html`<p class="live">${
            live.on
              ? html`Refreshes every ${live.seconds} seconds. <a href=${live.href(false)}>Stop refreshing</a>`
              : html`<a href=${live.href(true)}>Refresh every ${live.seconds} seconds</a>`
          }</p>`
        }
        ${notice && html`<p class=${notice.error ? 'notice error' : 'notice'} role="status">${notice.text}</p>`}
        ${body}
      </main>
    </body>
  </html>`
  return `<!doctype html>\n${render(page)}`
}

/** The headers every operator page is sent with. */
export const ADMIN_PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': ADMIN_CSP,
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
}

/** `path` with the query parameters that have a value (empty strings and undefined are left out). */
export function adminHref(path: string, params: Record<string, string | number | boolean | undefined> = {}): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === '' || value === false) continue
    query.set(name, String(value))
  }
  const search = query.toString()
  return search ? `${path}?${search}` : path
}

/** A time in milliseconds as `2026-11-26 04:31:07 UTC`; empty for 0. */
export function adminTime(ms: number): string {
  if (!ms) return ''
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`
}

export interface FilterField {
  name: string
  label: string
  value: string
  type?: 'text' | 'number' | 'date' | 'datetime-local' | 'checkbox'
  /** A select instead of an input: [value, label] pairs. */
  options?: [string, string][]
  placeholder?: string
}

/** A GET form of filters for a list; submitting starts the list again from its first page. */
export function filterForm(action: string, fields: FilterField[]): VNode {
  return html`<form class="filters" method="get" action=${action} role="search">
    ${fields.map((field) => {
      const id = `filter-${field.name}`
      if (field.options) {
        return html`<label for=${id}>${field.label}
          <select id=${id} name=${field.name}>
            ${field.options.map(([value, label]) => html`<option value=${value} selected=${value === field.value}>${label}</option>`)}
          </select>
        </label>`
      }
      if (field.type === 'checkbox') {
        return html`<label for=${id}>${field.label}
          <input id=${id} type="checkbox" name=${field.name} value="true" checked=${field.value === 'true'} />
        </label>`
      }
      return html`<label for=${id}>${field.label}
        <input id=${id} name=${field.name} type=${field.type ?? 'text'} value=${field.value} placeholder=${field.placeholder} />
      </label>`
    })}
    <button type="submit">Filter</button>
    <a href=${action}>Clear</a>
  </form>`
}

/** The link to the next page of a list, or nothing on the last page. */
export function pager(nextHref: string | undefined): VNode | null {
  return nextHref ? html`<p class="pager"><a href=${nextHref} rel="next">Next page →</a></p>` : null
}

/** The placeholder of a list with no rows, saying why. */
export function emptyState(text: string): VNode {
  return html`<p class="empty">${text}</p>`
}

/** A hidden CSRF field for an action form. */
export function csrfField(token: string): VNode {
  return html`<input type="hidden" name="_csrf" value=${token} />`
}
