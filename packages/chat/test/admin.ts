import type { TestContext } from 'node:test'
import { createDatabase, type DatabaseDialect, signedHeaders } from '@atrium/platform'
import { createTestDatabaseUrl } from '@atrium/platform/testing'
import type { ChatDatabase } from '../src/db/schema.ts'
import type { MessageRow } from '../src/messages/messages.repository.ts'
import { SERVICE_SECRET, startChatOn } from './support.ts'

/** Who asks for an operator page: nobody, a signed-in user, or an operator (the admin scope). */
export type Visitor = { crm?: number; scopes?: string }

export const OPERATOR: Visitor = { crm: 900, scopes: 'chat admin' }
export const USER: Visitor = { crm: 901, scopes: 'chat' }
export const ANONYMOUS: Visitor = {}

function identity({ crm, scopes }: Visitor): Record<string, string> {
  const headers: Record<string, string> = {}
  if (crm) headers['X-Crm'] = String(crm)
  if (scopes) headers['X-Scopes'] = scopes
  return headers
}

export interface PageResponse {
  status: number
  location: string
  html: string
  headers: Headers
}

/** Opens operator pages of a chat module as the gateway would: signed hops, with the visitor's identity. */
export function createAdminClient(base: string) {
  async function send(method: 'GET' | 'POST', url: string, visitor: Visitor, form?: Record<string, string>) {
    const headers: Record<string, string> = { ...identity(visitor) }
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded'
    const response = await fetch(`${base}${url}`, {
      method,
      headers: signedHeaders(SERVICE_SECRET, method, url, headers),
      body: form ? new URLSearchParams(form).toString() : undefined,
      redirect: 'manual',
    })
    return {
      status: response.status,
      location: response.headers.get('location') ?? '',
      html: await response.text(),
      headers: response.headers,
    } satisfies PageResponse
  }
  return {
    /** GET a page; `query` values are sent as a form would send them. */
    page(path: string, visitor: Visitor = OPERATOR, query: Record<string, string | number | boolean> = {}) {
      const search = new URLSearchParams(Object.entries(query).map(([key, value]) => [key, String(value)])).toString()
      return send('GET', search ? `${path}?${search}` : path, visitor)
    },
    /** POST an action form. */
    action(path: string, form: Record<string, string>, visitor: Visitor = OPERATOR) {
      return send('POST', path, visitor, form)
    },
  }
}

/** The chat module with a client of its operator pages, the JSON client, and a connection of its own to the database. */
export async function startChatAdmin(t: TestContext, dialect: DatabaseDialect, settings: Record<string, unknown> = {}) {
  const url = await createTestDatabaseUrl(t, dialect)
  const chat = await startChatOn(t, url, settings)
  const database = createDatabase<ChatDatabase>(url)
  t.after(() => database.destroy())
  return { chat, admin: createAdminClient(chat.base), db: database.db }
}

/** The values of `data-id` attributes of a page's rows, in page order. */
export function rowIds(html: string): number[] {
  return [...html.matchAll(/<tr data-id="(\d+)"/g)].map((match) => Number(match[1]))
}

/** The href of the page's next-page link, entities decoded, or undefined. */
export function nextLink(html: string): string | undefined {
  const href = /<a href="([^"]+)" rel="next"/.exec(html)?.[1]
  return href?.replaceAll('&amp;', '&')
}

/** A chat_mess row with every column not given at its default, for tests that write history directly. */
export function messageRow(
  fields: Partial<MessageRow> & Pick<MessageRow, 'timetick' | 'chat_id' | 'owner'>,
): MessageRow {
  return {
    timetick_update: fields.timetick,
    content: '',
    file_id: 0,
    file_name: '',
    file_size: 0,
    file_type: '',
    flags: 0,
    linked_message_id: 0,
    link_kind: 0,
    forwarded_from: 0,
    edited: 0,
    ...fields,
  }
}
