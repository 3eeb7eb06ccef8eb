import type { TestContext } from 'node:test'
import { freePort } from '@atrium/platform/testing'
import { type AddressObject, type ParsedMail, simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'

/** One message the peer accepted: the SMTP envelope, the authenticated user and the parsed mail. */
export interface ReceivedMail {
  envelopeTo: string[]
  user: string | undefined
  raw: Buffer
  mail: ParsedMail
}

/** A real SMTP server on a loopback ephemeral port that requires AUTH PLAIN or LOGIN (no TLS). */
export async function startSmtpPeer(t: TestContext, credentials: { username: string; password: string }) {
  const received: ReceivedMail[] = []
  const server = new SMTPServer({
    authMethods: ['PLAIN', 'LOGIN'],
    authOptional: false,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === credentials.username && auth.password === credentials.password)
        return callback(null, { user: auth.username })
      return callback(new Error('Invalid username or password'))
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', async () => {
        const raw = Buffer.concat(chunks)
        received.push({
          envelopeTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          user: session.user as string | undefined,
          raw,
          mail: await simpleParser(raw),
        })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const address = server.server.address()
  if (address === null || typeof address === 'string') throw new Error('SMTP peer has no TCP address')
  return { port: address.port, received }
}

/** A loopback port with nothing listening on it (below the ephemeral range, so no listen(0) takes it). */
export function closedPort(): Promise<number> {
  return freePort()
}

/** The plain addresses of a parsed To/From header. */
export function addressesOf(header: AddressObject | AddressObject[] | undefined): string[] {
  const objects = header === undefined ? [] : Array.isArray(header) ? header : [header]
  return objects.flatMap((object) => object.value.map((entry) => entry.address ?? ''))
}
