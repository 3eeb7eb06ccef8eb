import type { TestContext } from 'node:test'
import type { DatabaseDialect } from '@atrium/platform'
import { json } from '@atrium/platform/testing'
import { SERVICE_SECRET, startChat } from '../../chat/test/support.ts'
import { type StartOptions, startGateway } from './support.ts'

/**
 * A gateway wired to a real chat module, with helpers for people: a signed-in person (session
 * cookie and CSRF token) and calls of the gateway's /auth/v1 routes as them.
 */
export async function startPeopleWorld(t: TestContext, dialect: DatabaseDialect, options: StartOptions = {}) {
  // After-hooks run in the order they were added: the gateway (and its profile sync) stops
  // before the chat module and its database go.
  let stopGateway = async () => {}
  t.after(() => stopGateway())
  // Both sign with the chat tests' secret, so `chat` calls the module as the gateway does.
  const chat = await startChat(t, dialect)
  const gateway = await startGateway(t, dialect, {
    ...options,
    settings: { Modules: { chat: chat.base }, ServiceSecret: SERVICE_SECRET, ...options.settings },
  })
  stopGateway = () => gateway.app.close()

  /** A person with a session; `name` '' for one who chose no display name. */
  async function person(name = '', contacts: { email?: string; phone?: string } = {}) {
    const user = await gateway.store.users.create({ name })
    if (contacts.email) await gateway.store.users.addContact(user.crm_id, 1, contacts.email)
    if (contacts.phone) await gateway.store.users.addContact(user.crm_id, 2, contacts.phone)
    const { token, session } = await gateway.store.sessions.create({
      crmId: user.crm_id,
      method: 'email_otp',
      ip: '127.0.0.1',
      userAgent: 'test',
    })
    const headers = { cookie: `${gateway.config.Sessions.CookieName}=${token}`, 'x-csrf-token': session.csrf }
    return { crmId: user.crm_id, headers, ...callsAs(headers) }
  }

  function callsAs(headers: Record<string, string>) {
    return {
      /** GET /auth/v1/people?q=…: status and envelope. */
      async search(q: string) {
        const response = await fetch(`${gateway.url}/auth/v1/people?${new URLSearchParams({ q })}`, { headers })
        return { status: response.status, body: await json(response), retryAfter: response.headers.get('retry-after') }
      },
      async setName(name: string) {
        const response = await fetch(`${gateway.url}/auth/v1/profile`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ name }),
        })
        return { status: response.status, body: await json(response) }
      },
    }
  }

  return { ...gateway, chat, person, callsAs }
}
