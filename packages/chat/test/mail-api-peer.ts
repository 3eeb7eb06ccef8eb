import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { TestContext } from 'node:test'
import { closeAfterTest } from '@atrium/platform/testing'

/** The email APIs the peer speaks. */
export type MailApiName = 'postmark' | 'sendgrid'

/**
 * How the peer answers the next sends: as the provider does (`accept`), with a server error, or
 * never (`hang`, until the test ends).
 */
export type PeerMode = 'accept' | 'server-error' | 'hang'

/** One message the peer accepted, in provider-neutral terms, with the request it came in. */
export interface AcceptedMail {
  messageId: string
  from: string
  to: string[]
  subject: string
  text: string
  html: string | undefined
  /** Reply-To, when the message set one. */
  replyTo: string | undefined
  /** Header fields the message set besides the provider's own (threading, X-Loop), by name. */
  mailHeaders: Record<string, string>
  headers: IncomingMessage['headers']
  body: Record<string, unknown>
}

// As documented: Postmark refuses a message over 10 MB; SendGrid a request over 30 MB. The peer
// uses a small limit so that a test can reach it.
const PEER_MAX_BYTES = 150 * 1024

type Answer = { status: number; headers?: Record<string, string>; body?: unknown }
type Check = (body: Record<string, unknown>, headers: IncomingMessage['headers']) => Answer | AcceptedMail

function isString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0
}

/**
 * Postmark's `POST /email` as its API reference describes it: X-Postmark-Server-Token, JSON with
 * From, To (comma-separated), Subject, TextBody/HtmlBody; 401 without a valid token, 422 with an
 * ErrorCode (300 invalid request, 406 inactive recipient), 200 with MessageID and ErrorCode 0.
 */
function postmark(token: string, inactive: Set<string>): Check {
  return (body, headers) => {
    if (headers['x-postmark-server-token'] !== token)
      return { status: 401, body: { ErrorCode: 10, Message: 'Request does not contain a valid Server token.' } }
    const { From, To, Subject, TextBody, HtmlBody } = body
    if (!isString(From) || !isString(To) || !isString(Subject) || !(isString(TextBody) || isString(HtmlBody)))
      return { status: 422, body: { ErrorCode: 300, Message: 'Invalid email request: a required field is missing.' } }
    const to = To.split(',').map((address) => address.trim())
    const refused = to.filter((address) => inactive.has(address))
    if (refused.length > 0)
      return {
        status: 422,
        body: {
          ErrorCode: 406,
          Message: `You tried to send to recipient(s) that have been marked as inactive. Found inactive addresses: ${refused.join(', ')}. Inactive recipients are ones that have generated a hard bounce, a spam complaint, or a manual suppression.`,
        },
      }
    const html = HtmlBody as string | undefined
    const mailHeaders = Object.fromEntries(
      ((body.Headers ?? []) as { Name: string; Value: string }[]).map(({ Name, Value }) => [Name, Value]),
    )
    const replyTo = body.ReplyTo as string | undefined
    return {
      messageId: randomUUID(),
      from: From,
      to,
      subject: Subject,
      text: String(TextBody),
      html,
      replyTo,
      mailHeaders,
      headers,
      body,
    }
  }
}

/**
 * SendGrid's `POST /v3/mail/send`: `Authorization: Bearer <key>`, JSON with personalizations[].to,
 * from {email, name}, subject, content (text/plain before text/html); 401 or 400 with
 * `{errors: [{message, field}]}`, 202 with an empty body and X-Message-Id.
 */
function sendgrid(key: string, inactive: Set<string>): Check {
  const error = (status: number, message: string, field: string | null = null): Answer => ({
    status,
    body: { errors: [{ message, field, help: null }] },
  })
  return (body, headers) => {
    if (headers.authorization !== `Bearer ${key}`)
      return error(401, 'The provided authorization grant is invalid, expired, or revoked')
    const { personalizations, from, subject, content } = body as {
      personalizations?: { to?: { email?: unknown }[] }[]
      from?: { email?: unknown; name?: unknown }
      subject?: unknown
      content?: { type?: unknown; value?: unknown }[]
    }
    const to = (personalizations?.[0]?.to ?? []).map(({ email }) => email)
    if (personalizations?.length !== 1 || to.length === 0 || !to.every(isString))
      return error(400, 'The to array is required for all personalization objects.', 'personalizations.0.to')
    if (new Set(to).size !== to.length)
      return error(400, 'Each email address in the personalization block should be unique.', 'personalizations.0')
    if (!isString(from?.email)) return error(400, 'The from object must be provided for every email send.', 'from')
    if (!isString(subject)) return error(400, 'The subject is required.', 'subject')
    if (!Array.isArray(content) || content.length === 0 || !content.every((part) => isString(part.value)))
      return error(400, 'The content value must be a string at least one character in length.', 'content.0.value')
    if (content[0]?.type !== 'text/plain')
      return error(400, 'If present, text/plain content must be first, followed by text/html.', 'content.0.type')
    const refused = to.filter((address) => inactive.has(address))
    if (refused.length > 0)
      return error(400, `Does not contain a valid address: ${refused.join(', ')}`, 'personalizations')
    const part = (type: string) => content.find((item) => item.type === type)?.value as string | undefined
    const name = isString(from.name) ? `${from.name} <${from.email}>` : from.email
    const replyTo = (body.reply_to as { email?: string } | undefined)?.email
    return {
      messageId: randomUUID(),
      from: name,
      to,
      subject,
      text: part('text/plain') ?? '',
      html: part('text/html'),
      replyTo,
      mailHeaders: (body.headers ?? {}) as Record<string, string>,
      headers,
      body,
    }
  }
}

const ROUTES: Record<MailApiName, string> = { postmark: '/email', sendgrid: '/v3/mail/send' }

/**
 * A local HTTP server that speaks one email provider's documented send operation and records what
 * our client sent. `inactive` addresses are refused as the provider refuses them.
 */
export async function startMailApiPeer(t: TestContext, api: MailApiName, key: string, inactive: string[] = []) {
  const accepted: AcceptedMail[] = []
  const requests: { path: string; status: number }[] = []
  const check = (api === 'postmark' ? postmark : sendgrid)(key, new Set(inactive))
  let mode: PeerMode = 'accept'
  const hanging = new Set<ServerResponse>()

  function answer(response: ServerResponse, { status, headers = {}, body }: Answer) {
    const text = body === undefined ? '' : JSON.stringify(body)
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text)
  }

  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of request as AsyncIterable<Buffer>) {
      size += chunk.length
      if (size <= PEER_MAX_BYTES) chunks.push(chunk)
    }
    const path = request.url ?? ''
    const status = (code: number) => requests.push({ path, status: code })
    if (mode === 'hang') {
      status(0)
      hanging.add(response)
      return
    }
    if (request.method !== 'POST' || path !== ROUTES[api]) {
      status(404)
      return answer(response, { status: 404, body: { Message: 'Not found' } })
    }
    if (mode === 'server-error') {
      status(500)
      return answer(response, { status: 500, body: { ErrorCode: 0, Message: 'Internal server error', errors: [] } })
    }
    if (size > PEER_MAX_BYTES) {
      status(413)
      return answer(response, { status: 413, body: { errors: [{ message: 'Payload Too Large', field: null }] } })
    }
    if (request.headers['content-type'] !== 'application/json') {
      status(415)
      return answer(response, { status: 415, body: { Message: 'JSON required' } })
    }
    let body: Record<string, unknown>
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    } catch {
      status(400)
      return answer(response, { status: 400, body: { ErrorCode: 402, Message: 'Invalid JSON' } })
    }
    const result = check(body, request.headers)
    if ('status' in result) {
      status(result.status)
      return answer(response, result)
    }
    accepted.push(result)
    if (api === 'postmark') {
      status(200)
      const submitted = new Date().toISOString()
      return answer(response, {
        status: 200,
        body: {
          To: result.to.join(', '),
          SubmittedAt: submitted,
          MessageID: result.messageId,
          ErrorCode: 0,
          Message: 'OK',
        },
      })
    }
    status(202)
    return answer(response, { status: 202, headers: { 'x-message-id': result.messageId } })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closeAfterTest(t, async () => {
    for (const response of hanging) response.destroy()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the mail API peer has no TCP address')
  return {
    url: `http://127.0.0.1:${address.port}`,
    accepted,
    requests,
    setMode(next: PeerMode) {
      mode = next
    },
  }
}
