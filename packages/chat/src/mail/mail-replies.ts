import { randomBytes } from 'node:crypto'
import { ChatMessFlags } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { Mailer } from '../delivery/mailer.ts'
import type { MessageRow } from '../messages/messages.repository.ts'
import type { Store } from '../store.ts'
import { type MailContactRow, REPLY_CURSOR } from './mail.repository.ts'

export interface MailRepliesOptions {
  store: Store
  mailer: Mailer
  log: FastifyBaseLogger
  /** Interval of the re-read that finds messages other chat instances posted. */
  pollMs: number
}

const PAGE = 100
// Rows that are not something a person wrote to the sender: mail itself, deleted, widgets and calls.
const NOT_A_REPLY =
  ChatMessFlags.Email | ChatMessFlags.Deleted | ChatMessFlags.Widget | ChatMessFlags.WidgetCommand | ChatMessFlags.Call

function replySubject(subject: string): string {
  const clean = subject.trim()
  if (!clean) return 'Re: your message'
  return /^re:/i.test(clean) ? clean : `Re: ${clean}`
}

function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1)
}

/**
 * The chat module's reply hook of the email bridge: a message written in a chat that has email
 * contacts goes to each contact by email, From the bridge address they wrote to, with In-Reply-To
 * and References of their latest mail so mail clients thread it, and a Message-ID recorded in
 * mail_messages so their answer lands in the same chat. It reads NewChatMessage events after a
 * cursor shared by every chat instance, claimed before sending: a reply is sent at most once.
 */
export function createMailReplies({ store, mailer, log, pollMs }: MailRepliesOptions) {
  let running: Promise<void> | undefined
  let again = false
  let timer: NodeJS.Timeout | undefined
  let stopSequenced: (() => void) | undefined
  // Off while no chat has an email contact: then commits do not wake the sender at all.
  let active = false
  let lastAdvance = 0
  const now = () => performance.now()

  async function refresh(): Promise<void> {
    active = await store.mail.hasContacts()
    if (active) await wake()
  }

  async function send(message: MessageRow, contact: MailContactRow): Promise<void> {
    const names = await store.profiles.names([message.owner])
    const file = message.file_name ? `\n\n[attachment in the chat: ${message.file_name}]` : ''
    const domain = domainOf(contact.recipient)
    const messageId = `<${message.timetick}.${randomBytes(6).toString('hex')}@${domain}>`
    await mailer.send({
      to: [contact.address],
      from: { name: names.get(message.owner) || 'Atrium', address: contact.recipient },
      replyTo: contact.recipient,
      subject: replySubject(contact.subject),
      text: `${message.content}${file}`,
      messageId,
      ...(contact.last_message_id ? { inReplyTo: contact.last_message_id } : {}),
      ...(contact.thread_refs ? { references: contact.thread_refs } : {}),
      // Our own mail coming back (an auto-forward, a misrouted bounce) is refused as a loop.
      headers: { 'X-Loop': domain },
    })
    await store.mail.addMessage({
      message_id: messageId,
      member: contact.member,
      chat_id: message.chat_id,
      mess_id: message.timetick,
      outbound: 1,
    })
  }

  async function deliver(messageId: number): Promise<void> {
    const message = await store.messages.find(messageId)
    if (!message || (message.flags & NOT_A_REPLY) !== 0) return
    const contacts = await store.mail.contactsOf(message.chat_id)
    if (contacts.some((contact) => contact.member === message.owner)) return
    // A sender hears only what was written after they first wrote (their guest id is that moment's
    // tick): joining a group by mail does not mail them its history.
    for (const contact of contacts.filter((row) => message.timetick > row.member)) {
      try {
        await send(message, contact)
        log.info({ chat_id: message.chat_id, message_id: message.timetick }, 'chat reply sent by email')
      } catch (error) {
        log.warn({ chat_id: message.chat_id, message_id: message.timetick, err: error }, 'chat reply by email failed')
      }
    }
  }

  /** Sends the replies of every message posted since the cursor; returns how many events it read. */
  async function runOnce(): Promise<number> {
    const cursor = await store.mail.cursor(REPLY_CURSOR)
    const head = await store.mail.head()
    // The first run starts at the present: messages written before the bridge existed are not mailed.
    if (cursor === undefined) {
      await store.mail.initCursor(REPLY_CURSOR, head)
      return 0
    }
    if (head <= cursor) return 0
    const rows = await store.mail.newMessagesAfter(cursor, head, PAGE)
    // With nothing to send, the cursor moves at most once per poll interval: a busy chat module
    // without mail contacts in its active chats does not write it on every commit.
    if (rows.length === 0 && now() - lastAdvance < pollMs) return 0
    lastAdvance = now()
    const to = rows.length === PAGE ? Number(rows.at(-1)!.tick_update) : head
    if (!(await store.mail.claim(REPLY_CURSOR, cursor, to))) return 0
    for (const row of rows) {
      const { message_id } = JSON.parse(row.data) as { message_id: string }
      await deliver(Number(message_id))
    }
    return rows.length
  }

  function wake(): Promise<void> {
    if (running) {
      again = true
      return running
    }
    running = (async () => {
      try {
        do {
          again = false
          while ((await runOnce()) === PAGE) {}
        } while (again)
      } catch (error) {
        log.error({ err: error }, 'email reply sender failed')
      } finally {
        running = undefined
      }
    })()
    return running
  }

  return {
    /** Starts at the present and follows new messages. */
    async start(): Promise<void> {
      await wake()
      await refresh()
      stopSequenced = store.events.onSequenced(() => {
        if (active) void wake()
      })
      timer = setInterval(() => {
        refresh().catch((error: unknown) => log.error({ err: error }, 'email reply sender failed'))
      }, pollMs)
      timer.unref()
    },
    /** A mail contact was stored: follow new messages from now on. */
    activate(): void {
      active = true
    },
    /** Stops following and waits for the run in progress. */
    async close(): Promise<void> {
      stopSequenced?.()
      if (timer) clearInterval(timer)
      await running
    },
  }
}
