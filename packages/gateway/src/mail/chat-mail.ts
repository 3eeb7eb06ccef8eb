import { errorCodes, signedHeaders } from '@atrium/platform'
import type { ModuleInstances } from '../proxy/module-instances.ts'
import type { Refusal } from './mail-auth.ts'
import type { StoredMailFile } from './mail-files.ts'

export interface ChatMailOptions {
  /** The chat module's instances (Modules.chat). */
  chat: ModuleInstances
  serviceSecret: string
  timeoutMs?: number
}

/** One verified inbound mail as the chat module's ReceiveEmail takes it. */
export interface InboundMail {
  recipient: string
  local: string
  from: { address: string; name: string }
  subject: string
  text: string
  message_id: string
  in_reply_to?: string
  references: string[]
  /** The attachments, stored already as finished files of the file service. */
  files: StoredMailFile[]
}

/**
 * The chat module's answer. A refusal it sent means nothing was stored; `uncertain` means no answer
 * came (unreachable, a timeout), so the mail may have been stored after all.
 */
export type ChatAnswer = { ok: true; result: Record<string, unknown> } | ({ ok: false; uncertain?: boolean } & Refusal)

// What the chat module's refusals mean to the sending server: permanent, with the reason.
const PERMANENT: Record<number, Refusal> = {
  [errorCodes.MailRecipientUnknown.code]: { responseCode: 550, message: '5.1.1 No such address here' },
  [errorCodes.MessageTooLong.code]: { responseCode: 552, message: '5.3.4 The message text is too long for a chat' },
  [errorCodes.ChatArchived.code]: { responseCode: 550, message: '5.2.1 The chat of this address is archived' },
  [errorCodes.NotChatAdmin.code]: { responseCode: 550, message: '5.7.1 Only admins post to this channel' },
  [errorCodes.InvalidRequest.code]: {
    responseCode: 550,
    message: '5.6.0 The message cannot be stored as a chat message',
  },
}
const TEMPORARY: Refusal = { responseCode: 451, message: '4.3.0 The chat service is not available; try again later' }

/** Signed calls of the chat module's email bridge operations (/private/v1/MailRecipient, ReceiveEmail). */
export function createChatMail({ chat, serviceSecret, timeoutMs = 15_000 }: ChatMailOptions) {
  async function call(operation: string, body: object): Promise<ChatAnswer> {
    const url = `${chat.url.replace(/\/+$/, '')}/private/v1/${operation}`
    try {
      const response = await chat.fetch(url, {
        method: 'POST',
        headers: signedHeaders(serviceSecret, 'POST', url, { 'content-type': 'application/json' }),
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      })
      const envelope = (await response.json().catch(() => ({}))) as {
        result?: Record<string, unknown>
        error?: { code: number }
      }
      if (response.ok && envelope.result) return { ok: true, result: envelope.result }
      if (!envelope.error) return { ok: false, uncertain: true, ...TEMPORARY }
      return { ok: false, ...(PERMANENT[envelope.error.code] ?? TEMPORARY) }
    } catch {
      return { ok: false, uncertain: true, ...TEMPORARY }
    }
  }

  return {
    /** Whether the local part names an invite code or a user (asked at RCPT time). */
    recipient: (local: string) => call('MailRecipient', { local }),
    /** Stores one mail as a chat message; idempotent by Message-ID. */
    receive: (mail: InboundMail) => call('ReceiveEmail', mail),
  }
}

export type ChatMail = ReturnType<typeof createChatMail>
