import { generateKeyPairSync } from 'node:crypto'
import { connect } from 'node:net'
import type { TestContext } from 'node:test'
import { ChatMessFlags, type DatabaseDialect } from '@atrium/platform'
import { createTransport } from 'nodemailer'
import { startSmtpPeer } from '../../chat/test/smtp-peer.ts'
import { SERVICE_SECRET as CHAT_SECRET, type ChatCaller, startChat } from '../../chat/test/support.ts'
import { type DnsAnswer, startDnsPeer } from './dns-peer.ts'
import { type StorageBackend, startUploadGateway } from './uploads.ts'

/** The project domain of the test bridge. */
export const BRIDGE_DOMAIN = 'atrium.test'

/** A sender domain with a DKIM key (selector `s1`) published on the test DNS peer. */
export interface SenderDomain {
  domain: string
  selector: string
  privateKey: string
}

/** A new 2048-bit RSA key for `domain`, with its DKIM record for the zone. */
export function senderDomain(domain: string, selector = 's1'): SenderDomain & { record: [string, DnsAnswer] } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64')
  return {
    domain,
    selector,
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    // A TXT string holds 255 bytes at most, so the key is split as DNS publishers do.
    record: [`${selector}._domainkey.${domain}`, [[`v=DKIM1; k=rsa; p=${p.slice(0, 200)}`, p.slice(200)]]],
  }
}

export interface MailFields {
  from: string | { name: string; address: string }
  to: string
  subject?: string
  text?: string
  headers?: Record<string, string>
  messageId?: string
  inReplyTo?: string
  references?: string
  attachments?: MailAttachment[]
  html?: string
}

/** An attachment as nodemailer takes it (`cid`: an inline part the HTML names). */
export interface MailAttachment {
  filename?: string
  content: string | Buffer
  contentType?: string
  cid?: string
  contentDisposition?: 'attachment' | 'inline'
}

/**
 * A message as its sender's server would send it, DKIM-signed (relaxed/relaxed) by nodemailer's
 * own signer, not by the verifier under test; unsigned when no key is given.
 */
export async function composeMail(fields: MailFields, key?: SenderDomain): Promise<Buffer> {
  const transport = createTransport({
    streamTransport: true,
    buffer: true,
    newline: 'windows',
    ...(key ? { dkim: { domainName: key.domain, keySelector: key.selector, privateKey: key.privateKey } } : {}),
  })
  const info = await transport.sendMail({ text: 'Hello from mail', subject: 'Question', ...fields })
  return info.message as Buffer
}

/** One SMTP reply: its code and its text (lines joined). */
export interface SmtpReply {
  code: number
  text: string
}

/**
 * A plain SMTP client on a raw socket, so tests see every reply code: EHLO, MAIL FROM, each RCPT
 * TO, then DATA with the message (dot-stuffed) unless an earlier command was refused. Returns
 * the replies in order, the greeting first.
 */
export async function smtpSend(
  port: number,
  envelope: { from: string; to: string[] },
  raw: Buffer | undefined,
): Promise<SmtpReply[]> {
  const socket = connect(port, '127.0.0.1')
  let buffered = ''
  const waiting: ((reply: SmtpReply) => void)[] = []
  const ready: SmtpReply[] = []
  socket.on('data', (chunk) => {
    buffered += chunk.toString('latin1')
    for (let end = buffered.search(/^\d{3} .*\r\n/m); end >= 0; end = buffered.search(/^\d{3} .*\r\n/m)) {
      const lineEnd = buffered.indexOf('\r\n', end) + 2
      const lines = buffered.slice(0, lineEnd).trimEnd().split('\r\n')
      buffered = buffered.slice(lineEnd)
      const reply = { code: Number(lines[0]!.slice(0, 3)), text: lines.map((line) => line.slice(4)).join('\n') }
      const waiter = waiting.shift()
      if (waiter) waiter(reply)
      else ready.push(reply)
    }
  })
  const next = () =>
    new Promise<SmtpReply>((resolve, reject) => {
      const early = ready.shift()
      if (early) return resolve(early)
      waiting.push(resolve)
      socket.once('close', () => reject(new Error('SMTP connection closed')))
    })
  const command = async (line: string | Buffer) => {
    socket.write(line)
    return next()
  }
  const replies = [await next()]
  try {
    replies.push(await command('EHLO sender.example\r\n'))
    const from = await command(`MAIL FROM:<${envelope.from}>\r\n`)
    replies.push(from)
    if (from.code >= 400) return replies
    let accepted = 0
    for (const to of envelope.to) {
      const reply = await command(`RCPT TO:<${to}>\r\n`)
      replies.push(reply)
      if (reply.code < 400) accepted++
    }
    if (accepted === 0 || raw === undefined) return replies
    const data = await command('DATA\r\n')
    replies.push(data)
    if (data.code !== 354) return replies
    const body = raw.toString('latin1').replace(/^\./gm, '..')
    replies.push(await command(Buffer.from(`${body}${body.endsWith('\r\n') ? '' : '\r\n'}.\r\n`, 'latin1')))
    await command('QUIT\r\n').catch(() => undefined)
    return replies
  } finally {
    socket.destroy()
  }
}

/** The reply to the end of DATA (the last one), or the first refusal before it. */
export function finalReply(replies: SmtpReply[]): SmtpReply {
  return replies.find((reply) => reply.code >= 400) ?? replies.at(-1)!
}

export interface BridgeOptions {
  /** MailBridge settings on top of the test ones. */
  bridge?: Record<string, unknown>
  /** More DNS records, e.g. the SPF record of a sender domain. */
  zone?: [string, DnsAnswer][]
  /** More gateway settings, e.g. Tls. */
  gateway?: Record<string, unknown>
  /** Where the file service keeps attachments: a directory of the test's own, or an S3 server. */
  backend?: StorageBackend
  /** Puts something between the gateway and the chat module: answers the URL the gateway calls. */
  chatFront?: (chatBase: string) => Promise<string>
}

/**
 * A gateway with the mail bridge on a loopback ephemeral port, its DNS answered by a local peer
 * holding the DKIM key of example.org, the real chat module (replies go to a local SMTP sink), and
 * a registered chat user with a personal invite.
 */
export async function startMailBridge(t: TestContext, dialect: DatabaseDialect, options: BridgeOptions = {}) {
  const sender = senderDomain('example.org')
  const other = senderDomain('other.test')
  const zone = new Map<string, DnsAnswer>([
    sender.record,
    other.record,
    ['example.org', [['v=spf1 -all']]],
    ...(options.zone ?? []),
  ])
  const dns = await startDnsPeer(t, zone)
  const sink = await startSmtpPeer(t, { username: 'relay', password: 'relay-password' })
  const chat = await startChat(t, dialect, {
    SmtpSettings: { Host: '127.0.0.1', Port: sink.port, Username: 'relay', Password: 'relay-password' },
  })
  const gateway = await startUploadGateway(t, dialect, {
    backend: options.backend ?? 'local',
    settings: {
      // The gateway signs its calls with the secret the chat test client uses too.
      ServiceSecret: CHAT_SECRET,
      Modules: { chat: options.chatFront ? await options.chatFront(chat.base) : chat.base },
      Dns: { Servers: [dns.server], TimeoutMs: 1000, Tries: 1 },
      MailBridge: { Enabled: true, Host: '127.0.0.1', Port: 0, Domain: BRIDGE_DOMAIN, ...options.bridge },
      ...options.gateway,
    },
  })
  const crmId = 7_000_001
  await chat.register([crmId, 'Olga Owner'])
  const owner = chat.user(crmId)
  const { code } = await owner.ok('create_invite', { kind: 'personal' })
  const port = gateway.app.mailPort()
  return { gateway, chat, sink, dns, zone, sender, other, owner, crmId, code: code as string, port }
}

/** A started bridge (startMailBridge). */
export type Bridge = Awaited<ReturnType<typeof startMailBridge>>

/** Every message with the Email flag in the chats of `who`, oldest first. */
export async function emailMessages(who: ChatCaller) {
  const { chats } = await who.read('get_chats')
  const all = []
  for (const chat of chats as { id: string }[]) {
    const { messages } = await who.read('get_chat_messages', { chat_id: chat.id, limit: 200 })
    all.push(...(messages as { id: string; chat_id: string; owner: string; content: string; flags: number }[]))
  }
  return all.filter((message) => (message.flags & ChatMessFlags.Email) !== 0).sort((a, b) => (a.id < b.id ? -1 : 1))
}

/**
 * Sends one mail (DKIM-signed by `key`, by default the example.org key; unsigned with undefined)
 * from its From: address to the invite address unless `to` says otherwise; answers the final reply.
 */
export async function deliver(
  bridge: Bridge,
  fields: Partial<MailFields>,
  key: SenderDomain | undefined = bridge.sender,
) {
  const mail: MailFields = {
    from: 'Alice Sender <alice@example.org>',
    to: `${bridge.code}@${BRIDGE_DOMAIN}`,
    ...fields,
  }
  const raw = await composeMail(mail, key)
  const envelopeFrom =
    typeof mail.from === 'string' ? (/<([^>]+)>/.exec(mail.from)?.[1] ?? mail.from) : mail.from.address
  return finalReply(await smtpSend(bridge.port, { from: envelopeFrom, to: [mail.to] }, raw))
}
