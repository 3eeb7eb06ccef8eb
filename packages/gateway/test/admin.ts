import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { type DatabaseDialect, errorCodes } from '@atrium/platform'
import { type StartOptions, startGateway } from './support.ts'

/** A browser of the operator panel: a session cookie (or none) and the Origin its forms post with. */
export interface PanelBrowser {
  crmId: number
  cookie: string
}

/**
 * A gateway with an operator (scope `admin`, named "Olive Operator"), a signed-in user without the
 * scope, and calls as a browser would make them: `page` GETs without following redirects, `post`
 * sends a form with the gateway's own Origin unless `headers` say otherwise.
 */
export async function startPanel(t: TestContext, dialect: DatabaseDialect, options: StartOptions = {}) {
  const gateway = await startGateway(t, dialect, options)
  const cookieName = gateway.config.Sessions.CookieName

  async function browserOf(name: string, scopes: string[]): Promise<PanelBrowser> {
    const user = await gateway.store.users.create({ name, scopes })
    const { token } = await gateway.store.sessions.create({
      crmId: user.crm_id,
      method: 'email_otp',
      ip: '127.0.0.1',
      userAgent: 'test browser',
    })
    return { crmId: user.crm_id, cookie: `${cookieName}=${token}` }
  }

  const operator = await browserOf('Olive Operator', ['admin'])
  const member = await browserOf('Mel Member', [])

  async function page(path: string, who?: PanelBrowser) {
    const response = await fetch(`${gateway.url}${path}`, {
      redirect: 'manual',
      headers: who ? { cookie: who.cookie } : {},
    })
    return {
      status: response.status,
      location: response.headers.get('location') ?? '',
      html: await response.text(),
      response,
    }
  }

  async function post(
    path: string,
    form: Record<string, string>,
    who?: PanelBrowser,
    headers: Record<string, string> = {},
  ) {
    const response = await fetch(`${gateway.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: gateway.config.PublicOrigin,
        ...(who ? { cookie: who.cookie } : {}),
        ...headers,
      },
      body: new URLSearchParams(form).toString(),
    })
    return { status: response.status, location: response.headers.get('location') ?? '', body: await response.text() }
  }

  return { ...gateway, operator, member, browserOf, page, post }
}

export type Panel = Awaited<ReturnType<typeof startPanel>>

/** The text of every table body row on a page, one string per row with tags removed. */
export function tableRows(html: string): string[] {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? ''
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((match) =>
    match[1]!
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim(),
  )
}

/** The href of the page's "Next page" link, entities decoded, or undefined on the last page. */
export function nextLink(html: string): string | undefined {
  return /<a href="([^"]+)" rel="next">/.exec(html)?.[1]?.replaceAll('&amp;', '&')
}

/**
 * Tries each action form as a signed-in user without the admin scope (the 403 page) and as the
 * operator posting from another site (CsrfRejected); `refused` checks a refusal's body further.
 */
export async function assertActionsRefused(
  panel: Panel,
  actions: [string, Record<string, string>][],
  refused: (body: string, path: string) => void = () => {},
): Promise<void> {
  for (const [path, form] of actions) {
    const member = await panel.post(path, form, panel.member)
    assert.equal(member.status, 403, path)
    assert.match(member.body, /You need the admin scope/)
    refused(member.body, path)
    const forged = await panel.post(path, form, panel.operator, { origin: 'https://evil.example' })
    assert.equal(forged.status, 403, path)
    assert.equal((JSON.parse(forged.body) as { error: { code: number } }).error.code, errorCodes.CsrfRejected.code)
  }
}
