import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import { type DatabaseDialect, verifyHop } from '@atrium/platform'
import { json } from '@atrium/platform/testing'
import { SERVICE_SECRET, type StartOptions, startGateway } from './support.ts'

/**
 * A stand-in for the chat module's SMS delivery (the chat module has no SMS provider wired in
 * tests): a real HTTP server that accepts only calls signed with the service secret and keeps
 * each SendOTP body, as an SMS provider's inbox would.
 */
export async function startSmsInbox(t: TestContext) {
  const received: { path: string; body: Record<string, unknown> }[] = []
  const server = createServer((request, response) => {
    let text = ''
    request.on('data', (chunk) => {
      text += chunk
    })
    request.on('end', () => {
      const signed = verifyHop(SERVICE_SECRET, { method: request.method!, url: request.url!, headers: request.headers })
      response.setHeader('content-type', 'application/json')
      if (!signed) {
        response.statusCode = 401
        return response.end(JSON.stringify({ error: { code: 1008, message: 'unsigned' }, id: 'x' }))
      }
      received.push({ path: request.url!, body: JSON.parse(text) })
      response.end(JSON.stringify({ result: { channel: 'sms', to: '+49******67' }, id: 'x' }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received }
}

/**
 * A gateway whose phone codes go to an SMS inbox standing in for its chat module; `post` sends
 * JSON and answers the status with the parsed envelope.
 */
export async function startPhoneWorld(t: TestContext, dialect: DatabaseDialect, options: StartOptions = {}) {
  const inbox = await startSmsInbox(t)
  const gateway = await startGateway(t, dialect, {
    ...options,
    settings: { ...options.settings, Modules: { chat: inbox.url } },
  })
  const post = async (path: string, body: object) => {
    const response = await fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: response.status, body: await json(response), response }
  }
  return { ...gateway, inbox, post }
}
