import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import type { DatabaseDialect } from '@atrium/platform'
import { json } from '@atrium/platform/testing'
import { startSmtpPeer } from '../../chat/test/smtp-peer.ts'
import { startChat } from '../../chat/test/support.ts'
import { SERVICE_SECRET, type StartOptions, startGateway } from './support.ts'

const SMTP = { username: 'gateway-test', password: 'smtp-password-for-sign-in-tests' }

/**
 * A gateway wired to a real chat module (same ServiceSecret) whose mail goes to a real SMTP sink,
 * so tests sign in end to end and read the emailed code and link.
 */
export async function startSignInWorld(t: TestContext, dialect: DatabaseDialect, options: StartOptions = {}) {
  // The gateway (its poller and profile sync) stops before the chat module and its database go:
  // after-hooks run in the order they were added.
  let stopGateway = async () => {}
  t.after(() => stopGateway())
  const smtp = await startSmtpPeer(t, SMTP)
  const chat = await startChat(t, dialect, {
    ServiceSecret: SERVICE_SECRET,
    SmtpSettings: { Host: '127.0.0.1', Port: smtp.port, Username: SMTP.username, Password: SMTP.password },
  })
  const gateway = await startGateway(t, dialect, {
    ...options,
    settings: { Modules: { chat: chat.base }, ...options.settings },
  })
  stopGateway = () => gateway.app.close()
  const { url } = gateway

  async function post(path: string, body: object, headers: Record<string, string> = {}) {
    return fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })
  }

  /** The code and magic-link token of the latest mail to `email`. */
  function mailTo(email: string) {
    const mail = smtp.received.findLast((received) => received.envelopeTo.includes(email.toLowerCase()))
    assert.ok(mail, `no mail to ${email}`)
    const text = mail.mail.text ?? ''
    const code = /sign-in code is (\d{6})/.exec(text)?.[1]
    const link = /(http\S+\/auth\/v1\/magic\?token=\S+)/.exec(text)?.[1]
    assert.ok(code && link, `no code or link in: ${text}`)
    return { code, link, token: new URL(link).searchParams.get('token')! }
  }

  /** Starts an email sign-in and returns the challenge id with the mailed code and link. */
  async function startEmail(email: string, extra: object = {}) {
    const response = await post('/auth/v1/email/start', { email, ...extra })
    const body = await json(response)
    assert.equal(response.status, 200, JSON.stringify(body))
    return { challengeId: body.result.challengeId as string, ...mailTo(email) }
  }

  /** Signs in by email code; returns the session cookie pair, CSRF token and user. */
  async function signIn(email: string, headers: Record<string, string> = {}, extra: object = {}) {
    const { challengeId, code } = await startEmail(email)
    const response = await post('/auth/v1/email/verify', { challengeId, code, ...extra }, headers)
    const body = await json(response)
    assert.equal(response.status, 200, JSON.stringify(body))
    const cookie = sessionCookieOf(response, gateway.config.Sessions.CookieName)
    assert.ok(cookie, 'the sign-in sets the session cookie')
    // Registered in the chat module (the profile sync) before a test names them in a chat.
    await gateway.app.syncProfiles()
    return { cookie, csrf: body.result.csrf as string, user: body.result.user, response }
  }

  return { ...gateway, chat, smtp, post, mailTo, startEmail, signIn }
}

/** `name=value` of the session cookie a response sets, or undefined. */
export function sessionCookieOf(response: Response, name: string): string | undefined {
  const header = response.headers.getSetCookie().find((value) => value.startsWith(`${name}=`))
  return header?.split(';')[0]
}
