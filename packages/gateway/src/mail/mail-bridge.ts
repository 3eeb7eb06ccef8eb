import { createHash } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { REFUSED_CONTROL, type TlsOptions } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import { type ParsedMail, simpleParser } from 'mailparser'
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server'
import type { GatewayConfig } from '../config.ts'
import { type FileService, removeFiles } from '../files/store-file.ts'
import type { Upload } from '../files/uploads.repository.ts'
import type { ChatMail, InboundMail } from './chat-mail.ts'
import type { MailAuth } from './mail-auth.ts'
import { describeFiles, mailFiles, SmtpRefusal, storeMailFiles } from './mail-files.ts'
import { createSenderLimits } from './sender-limits.ts'

export interface MailBridgeOptions {
  settings: GatewayConfig['MailBridge']
  /** The project domain of bridge addresses. */
  domain: string
  /** The gateway's certificate, offered with STARTTLS; none: STARTTLS is not offered. */
  tls: TlsOptions | undefined
  /** The chat module's bridge operations. */
  chat: ChatMail
  authenticate: MailAuth
  /** The file service the attachments are stored through, as uploads are. */
  files: FileService
  log: FastifyBaseLogger
  now: () => number
}

/** The local part of a bridge address: an invite code or a CRM id. */
const LOCAL = /^[A-Za-z0-9]{1,64}$/
const MESSAGE_ID = /^<[^<>\s]{1,996}>$/
// More Received: lines than this means the message is going round in circles (RFC 5321 §6.3).
const MAX_RECEIVED = 30
// Each signature costs a DNS lookup of a domain the sender chose; real mail carries one to three.
const MAX_SIGNATURES = 5
// biome-ignore lint/suspicious/noControlCharactersInRegex: header text is one line of printable text
const HEADER_CONTROL = /[\u0000-\u001f\u007f]+/g

/** Header text made one line: controls (a decoded CR LF among them) become spaces. */
function oneLine(value: string, max: number): string {
  return value.replace(HEADER_CONTROL, ' ').replace(/\s+/g, ' ').trim().slice(0, max)
}

function headerValues(parsed: ParsedMail, name: string): string[] {
  return parsed.headerLines
    .filter((line) => line.key === name)
    .map((line) => line.line.slice(line.line.indexOf(':') + 1).trim())
}

function messageIds(value: string | string[] | undefined): string[] {
  const list = value === undefined ? [] : Array.isArray(value) ? value : value.split(/\s+/)
  return list.filter((id) => MESSAGE_ID.test(id))
}

function readAll(stream: SMTPServerDataStream, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length
      // Past the limit the rest is read and dropped, so the client gets its 552 after DATA.
      if (size <= maxBytes) chunks.push(chunk)
    })
    stream.on('end', () => resolve(Buffer.concat(chunks)))
    stream.on('error', reject)
  })
}

/**
 * The inbound email bridge (spec "The gateway" item 11): an SMTP listener for `code@<domain>` and
 * `<crm id>@<domain>` that refuses, at SMTP time and with a reply code that says why, every
 * message it does not store: unknown addresses at RCPT, senders over their hourly limit at MAIL
 * FROM, and at the end of DATA oversized mail, loops, and mail whose From: domain does not vouch
 * for it (DKIM or SPF, strictly aligned). Bounces and auto-replies are accepted and dropped, never
 * stored or answered. Everything else becomes one chat message per recipient (ReceiveEmail), its
 * attachments stored as files through the file service first (mail-files.ts).
 */
export function createMailBridge({
  settings,
  domain,
  tls,
  chat,
  authenticate,
  files: fileService,
  log,
  now,
}: MailBridgeOptions) {
  const takeSender = createSenderLimits(settings.PerSenderPerHour, now)
  const bridgeDomain = domain.toLowerCase()

  /** The CRM id whose Files.QuotaBytes a mail's attachments count against: the address's owner. */
  async function quotaOwner(local: string): Promise<number> {
    const answer = await chat.recipient(local)
    if (!answer.ok) throw new SmtpRefusal(answer)
    return Number(answer.result.owner)
  }

  /**
   * After the chat module's answers: files a message names are attached; files no message names
   * (the chat module refused, or every recipient had this mail already) are removed at once. When
   * the answer was lost (a timeout), the chat module may yet commit, so they stay finished and
   * unattached, and the file sweep asks the chat module about them once their time is up.
   */
  async function settleFiles(stored: Upload[], named: boolean, uncertain: boolean): Promise<void> {
    if (stored.length === 0) return
    if (named) return fileService.uploads.markAttached(stored.map((file) => file.id))
    if (!uncertain) await removeFiles(fileService, stored)
  }

  async function accept(raw: Buffer, session: SMTPServerSession): Promise<string> {
    const parsed = await simpleParser(raw, { skipImageLinks: true, skipTextLinks: true })
    const loops = headerValues(parsed, 'x-loop').some((value) => value.toLowerCase() === bridgeDomain)
    if (loops || headerValues(parsed, 'received').length > MAX_RECEIVED)
      throw new SmtpRefusal({ responseCode: 554, message: '5.4.6 Mail loop detected' })

    const sender = session.envelope.mailFrom ? session.envelope.mailFrom.address : ''
    const autoSubmitted = headerValues(parsed, 'auto-submitted')[0]?.toLowerCase().split(';')[0]?.trim()
    if (!sender || (autoSubmitted !== undefined && autoSubmitted !== 'no')) {
      log.info({ bounce: !sender, autoSubmitted }, 'mail bridge: automatic message accepted and dropped')
      return '2.6.0 Automatic messages are accepted and not delivered to chats'
    }

    if (headerValues(parsed, 'dkim-signature').length > MAX_SIGNATURES)
      throw new SmtpRefusal({ responseCode: 550, message: `5.7.1 More than ${MAX_SIGNATURES} DKIM signatures` })
    const verdict = await authenticate({
      raw,
      ip: session.remoteAddress,
      helo: session.hostNameAppearsAs,
      sender,
      mta: bridgeDomain,
    })
    if (!verdict.ok) throw new SmtpRefusal(verdict)

    // The address replies go to must be the one authentication vouched for: the two parsers must
    // agree on the From: domain, or a crafted header could be read one way and answered another.
    const author = parsed.from?.value[0]
    const authorDomain = author?.address?.slice(author.address.lastIndexOf('@') + 1).toLowerCase()
    if (!author?.address || authorDomain !== verdict.fromDomain)
      throw new SmtpRefusal({ responseCode: 550, message: '5.1.7 The From: address cannot be read unambiguously' })
    const text = parsed.text ?? ''
    if (REFUSED_CONTROL.test(text))
      throw new SmtpRefusal({ responseCode: 550, message: '5.6.0 The text holds control characters (such as NUL)' })
    const messageId =
      parsed.messageId && MESSAGE_ID.test(parsed.messageId)
        ? parsed.messageId
        : `<${createHash('sha256').update(raw).digest('hex')}@${bridgeDomain}>`
    const inReplyTo = messageIds(parsed.inReplyTo)[0]
    const mail: Omit<InboundMail, 'recipient' | 'local' | 'files'> = {
      from: { address: author.address, name: oneLine(author.name ?? '', 200) },
      subject: oneLine(parsed.subject ?? '', 998),
      text,
      message_id: messageId,
      ...(inReplyTo ? { in_reply_to: inReplyTo } : {}),
      references: messageIds(parsed.references).slice(-100),
    }
    const files = mailFiles(parsed.attachments, settings, fileService.settings)
    const locals = session.envelope.rcptTo.map((rcpt) => rcpt.address.slice(0, rcpt.address.lastIndexOf('@')))
    const stored = files.length > 0 ? await storeMailFiles(fileService, await quotaOwner(locals[0]!), files) : []
    const described = describeFiles(stored)
    // One chat message per recipient, each naming the same files. A failure asks the sender to
    // retry; the recipients stored already recognise the Message-ID then, so nothing is stored twice.
    let named = false
    for (const local of locals) {
      const answer = await chat.receive({ ...mail, recipient: `${local}@${bridgeDomain}`, local, files: described })
      if (!answer.ok) {
        await settleFiles(stored, named, answer.uncertain === true)
        throw new SmtpRefusal(answer)
      }
      if (answer.result.duplicate !== true) named = true
    }
    await settleFiles(stored, named, false)
    log.info(
      { via: verdict.via, domain: verdict.fromDomain, recipients: session.envelope.rcptTo.length },
      'mail bridge: stored',
    )
    return '2.0.0 Delivered to the chat'
  }

  const server = new SMTPServer({
    name: bridgeDomain,
    banner: 'Atrium mail bridge',
    size: settings.MaxBytes,
    // Inbound mail only: no AUTH, and STARTTLS with the gateway's certificate when it has one.
    authOptional: true,
    disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(tls ? { key: tls.key, cert: tls.cert } : {}),
    disableReverseLookup: true,
    maxClients: settings.MaxConnections,
    socketTimeout: settings.TimeoutMs,
    closeTimeout: 1000,
    logger: false,

    onMailFrom(address, session, callback) {
      const key = address.address ? `from:${address.address.toLowerCase()}` : `ip:${session.remoteAddress}`
      if (!takeSender(key)) {
        log.info({ key: key.replace(/^from:[^@]*/, 'from:*') }, 'mail bridge: sender over its hourly limit')
        return callback(
          new SmtpRefusal({ responseCode: 450, message: '4.7.1 Too many messages from this sender; try again later' }),
        )
      }
      callback()
    },

    onRcptTo(address, session, callback) {
      const at = address.address.lastIndexOf('@')
      const local = address.address.slice(0, at)
      if (at < 0 || address.address.slice(at + 1).toLowerCase() !== bridgeDomain)
        return callback(new SmtpRefusal({ responseCode: 550, message: '5.7.1 Relaying denied: not a bridge address' }))
      if (session.envelope.rcptTo.length >= settings.MaxRecipients)
        return callback(new SmtpRefusal({ responseCode: 452, message: '4.5.3 Too many recipients' }))
      if (!LOCAL.test(local))
        return callback(new SmtpRefusal({ responseCode: 550, message: '5.1.1 No such address here' }))
      chat.recipient(local).then(
        (answer) => callback(answer.ok ? null : new SmtpRefusal(answer)),
        () => callback(new SmtpRefusal({ responseCode: 451, message: '4.3.0 Try again later' })),
      )
    },

    onData(stream, session, callback) {
      readAll(stream, settings.MaxBytes)
        .then((raw) => {
          if (stream.sizeExceeded)
            throw new SmtpRefusal({
              responseCode: 552,
              message: `5.3.4 The message exceeds ${settings.MaxBytes} bytes`,
            })
          return accept(raw, session)
        })
        .then(
          (message) => callback(null, message),
          (error: unknown) => {
            if (error instanceof SmtpRefusal) {
              log.info({ code: error.responseCode, reason: error.message }, 'mail bridge: refused')
              return callback(error)
            }
            log.error({ err: error }, 'mail bridge: failed')
            callback(new SmtpRefusal({ responseCode: 451, message: '4.3.0 Temporary failure; try again later' }))
          },
        )
    },
  })
  server.on('error', (error) => log.warn({ err: error }, 'mail bridge: connection error'))

  return {
    /** Starts listening on MailBridge.Host and Port. */
    listen(): Promise<void> {
      return new Promise((resolve, reject) => {
        server.server.once('error', reject)
        server.listen(settings.Port, settings.Host, () => {
          server.server.off('error', reject)
          const { address, port } = server.server.address() as AddressInfo
          log.info({ address, port }, 'mail bridge listening for SMTP')
          resolve()
        })
      })
    },
    /** The port listened on (useful with Port 0). */
    port(): number {
      return (server.server.address() as AddressInfo).port
    },
    /** Stops listening and closes open sessions. */
    close(): Promise<void> {
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}

export type MailBridge = ReturnType<typeof createMailBridge>
