import assert from 'node:assert/strict'
import { createTestDatabaseUrl, forEachDialect, listen } from '@atrium/platform/testing'
import { buildChat } from '../../../chat/src/app.ts'
import { loadChatConfig } from '../../../chat/src/config.ts'
import { startSmtpPeer } from '../../../chat/test/smtp-peer.ts'
import { capturedLog, SERVICE_SECRET, signedInUser, startGateway } from '../../test/support.ts'

type LogLine = { reqId?: string; msg?: string; req?: { url?: string } }

function parsed(lines: string[]): LogLine[] {
  return lines.map((line) => JSON.parse(line) as LogLine)
}

forEachDialect('the gateway and the chat module log a request under one request id', async (t, dialect) => {
  const smtp = await startSmtpPeer(t, { username: 'u', password: 'request-id-test-password' })
  const chatLog = capturedLog()
  const chat = await buildChat(
    loadChatConfig(
      {
        ChatDB: await createTestDatabaseUrl(t, dialect),
        ServiceSecret: SERVICE_SECRET,
        SmtpSettings: { Host: '127.0.0.1', Port: smtp.port, Username: 'u', Password: 'request-id-test-password' },
      },
      {},
    ),
    { logger: { level: 'info', stream: chatLog.stream } },
  )
  const chatUrl = await listen(t, chat)
  const gatewayLog = capturedLog()
  const gateway = await startGateway(t, dialect, {
    settings: { Modules: { chat: chatUrl } },
    logger: { level: 'info', stream: gatewayLog.stream },
  })
  await gateway.store.routes.add({ prefix: '/msg/', upstream: 'chat' })
  const user = await signedInUser(gateway)

  // A proxied request: the gateway forwards it with its X-Request-Id.
  const proxied = await fetch(`${gateway.url}/msg/v1/list_chats`, {
    method: 'POST',
    headers: { ...user.headers, 'x-request-id': 'hop-proxied-1' },
    body: '{}',
  })
  assert.equal(proxied.headers.get('x-request-id'), 'hop-proxied-1')
  await proxied.text()

  // One of the gateway's own routes that calls the module: an email sign-in sends its code through chat.
  const signIn = await fetch(`${gateway.url}/auth/v1/email/start`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': 'hop-otp-2' },
    body: JSON.stringify({ email: 'leo@example.com' }),
  })
  assert.equal(signIn.status, 200, await signIn.clone().text())
  assert.equal(signIn.headers.get('x-request-id'), 'hop-otp-2')

  const gatewayLines = parsed(gatewayLog.lines)
  const chatLines = parsed(chatLog.lines)
  for (const id of ['hop-proxied-1', 'hop-otp-2']) {
    assert.ok(
      gatewayLines.some((line) => line.reqId === id && line.msg === 'request completed'),
      `the gateway logged ${id}`,
    )
  }
  const chatUrlOf = (id: string) => chatLines.find((line) => line.reqId === id && line.req?.url)?.req?.url
  assert.equal(chatUrlOf('hop-proxied-1'), '/msg/v1/list_chats')
  assert.match(chatUrlOf('hop-otp-2') ?? '', /^\/private\/v1\/SendEmailOTP/)
  assert.ok(chatLines.some((line) => line.reqId === 'hop-otp-2' && line.msg === 'request completed'))
})
