import { createHmac, randomBytes } from 'node:crypto'
import { ApiError, ChatMessFlags, type Service } from '@atrium/platform'
import { Type } from 'typebox'
import { requireCanPost, requireMember } from '../access.ts'
import { admitGuest } from '../invites/invites.plugin.ts'
import { InviteKind, type InviteRow } from '../invites/invites.repository.ts'
import { newMessage, postMessage } from '../messages/message-rows.ts'
import { requireContentLength } from '../messages/messages.schema.ts'
import type { Store, Unit } from '../store.ts'
import type { MailContactRow } from './mail.repository.ts'

export interface MailPluginOptions {
  store: Store
  /** Keys the synthetic device GUID of each mail sender, so no one can compute it and read their chat. */
  serviceSecret: string
  /** Called after a mail was stored, so the reply sender follows its chat. */
  onContact: () => void
}

/** A bridge address's local part: an invite code, or a CRM id (all digits). */
const Local = Type.String({ pattern: '^[A-Za-z0-9]{1,64}$' })
const CRM_ID = /^[1-9][0-9]{0,15}$/
// Message-IDs as mailparser gives them, angle brackets included; a thread keeps the newest 20.
const MessageId = Type.String({ minLength: 3, maxLength: 998, pattern: '^<[^<>\\s]+>$' })
const MAX_REFERENCES = 20

const mailRecipient = {
  body: Type.Object({ local: Local }, { additionalProperties: false }),
  response: {
    200: Type.Object({
      kind: Type.Union([Type.Literal('invite'), Type.Literal('user')]),
      owner: Type.String({
        description: "The user the address belongs to (the invite's creator): attachments count against their quota.",
      }),
    }),
  },
}

const receiveEmail = {
  body: Type.Object(
    {
      recipient: Type.String({ minLength: 3, maxLength: 254, description: 'The bridge address the mail was sent to.' }),
      local: Local,
      from: Type.Object(
        {
          address: Type.String({ minLength: 3, maxLength: 254, pattern: '^[^\\s@<>]+@[^\\s@<>]+$' }),
          name: Type.String({ maxLength: 200, default: '' }),
        },
        { additionalProperties: false },
      ),
      subject: Type.String({ maxLength: 998, default: '' }),
      text: Type.String({ description: 'The mail text; at most 16,384 characters.' }),
      message_id: MessageId,
      in_reply_to: Type.Optional(Type.String({ maxLength: 998 })),
      references: Type.Array(Type.String({ maxLength: 998 }), { maxItems: 100, default: [] }),
      files: Type.Array(
        Type.Object(
          {
            id: Type.String({ pattern: '^[1-9][0-9]{0,15}$' }),
            name: Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\u0000-\\u001f\\u007f/\\\\]+$' }),
            size: Type.Integer({ minimum: 0 }),
            type: Type.String({ maxLength: 255 }),
          },
          { additionalProperties: false },
        ),
        {
          maxItems: 100,
          default: [],
          description: "The attachments, stored already by the gateway's file service; each becomes a file message.",
        },
      ),
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      chat_id: Type.String(),
      message_id: Type.String({ description: 'The chat message the mail became.' }),
      duplicate: Type.Boolean({ description: 'True when this Message-ID was stored before (a retried delivery).' }),
    }),
  },
}

function contentOf(text: string, subject: string): string {
  return text.trim() || subject.trim() || '(no text)'
}

/**
 * The email bridge's operations for the gateway (/private/v1): MailRecipient answers whether an
 * address exists (asked at RCPT time), ReceiveEmail stores one verified mail as a message with the
 * Email flag in one transaction (docs/delivery.md "Inbound email bridge").
 */
export default async function mailPlugin(app: Service, { store, serviceSecret, onContact }: MailPluginOptions) {
  function deviceGuidOf(code: string, address: string): string {
    return `mail-${createHmac('sha256', serviceSecret).update(`atrium mail sender\n${code}\n${address}`).digest('hex').slice(0, 40)}`
  }

  /** The hidden personal invite behind a user's address, made on the first mail to it. */
  async function userInvite(unit: Unit, crmId: number): Promise<InviteRow> {
    let code = await unit.mail.userInvite(crmId)
    if (code === undefined) {
      code = randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')
      // The first mail to the user makes the invite; a concurrent one finds it once this commits.
      if (await unit.mail.addUserInvite(crmId, code)) {
        const invite = { code, timetick: store.nextTick(), chat_id: 0, kind: InviteKind.Personal, created_by: crmId }
        await unit.invites.insert({ ...invite, revoked: 0 })
        return { ...invite, revoked: 0 }
      }
      code = (await unit.mail.userInvite(crmId)) ?? code
    }
    const invite = await unit.invites.find(code)
    if (!invite) throw new ApiError('MailRecipientUnknown', 'the mail address of this user is not available')
    return invite
  }

  async function inviteFor(unit: Unit, local: string): Promise<InviteRow> {
    if (CRM_ID.test(local)) {
      if (!(await unit.mail.isUser(Number(local)))) throw new ApiError('MailRecipientUnknown')
      return userInvite(unit, Number(local))
    }
    const invite = await unit.invites.find(local)
    if (!invite) throw new ApiError('MailRecipientUnknown')
    return invite
  }

  app.post('/MailRecipient', { schema: mailRecipient }, async (request) => {
    const { local } = request.body
    if (CRM_ID.test(local)) {
      if (!(await store.mail.isUser(Number(local)))) throw new ApiError('MailRecipientUnknown')
      return { kind: 'user' as const, owner: local }
    }
    const invite = await store.invites.find(local)
    if (!invite) throw new ApiError('MailRecipientUnknown')
    return { kind: 'invite' as const, owner: String(invite.created_by) }
  })

  app.post('/ReceiveEmail', { schema: receiveEmail }, async (request) => {
    const { recipient, local, subject, text, message_id, in_reply_to, references, files } = request.body
    const address = request.body.from.address.toLowerCase()
    const content = contentOf(text, subject)
    requireContentLength(content, 'the mail text')
    const threadIds = [...(in_reply_to ? [in_reply_to] : []), ...references]

    const answer = await store.transact(async (unit) => {
      // A reply in a thread continues its chat; otherwise the address picks the chat.
      let contact: Pick<MailContactRow, 'member' | 'chat_id' | 'recipient'> | undefined = await unit.mail.threadOf(
        address,
        threadIds,
      )
      if (contact && !(await unit.members.find(contact.chat_id, contact.member))) contact = undefined
      if (!contact) {
        const invite = await inviteFor(unit, local)
        const guest = await admitGuest(unit, store.nextTick, invite, deviceGuidOf(invite.code, address))
        contact = { member: guest.timetick, chat_id: guest.chat_id, recipient }
      }
      const { member, chat_id: chatId } = contact

      const access = await requireMember(unit, chatId, { member, guest: true, appId: 0 })
      requireCanPost(access)
      const row = newMessage(store, chatId, member, { content, flags: ChatMessFlags.Email })
      // The Message-ID is recorded first, so a concurrent or retried delivery of the same mail
      // waits for this one and then finds it instead of posting it twice.
      if (!(await unit.mail.addMessage({ message_id, member, chat_id: chatId, mess_id: row.timetick, outbound: 0 }))) {
        const known = (await unit.mail.findMessage(message_id, member))!
        return { chat_id: String(known.chat_id), message_id: String(known.mess_id), duplicate: true }
      }
      const name = request.body.from.name.trim() || address
      await unit.profiles.setNames([{ member, name }], store.nextTick())
      await postMessage(unit, row, access.chat.app_id)
      // Each attachment follows the text as a file message of the sender (a message names one file).
      for (const file of files) {
        const fields = { file_id: Number(file.id), file_name: file.name, file_size: file.size, file_type: file.type }
        await postMessage(
          unit,
          newMessage(store, chatId, member, { ...fields, flags: ChatMessFlags.Email | ChatMessFlags.File }),
          access.chat.app_id,
        )
      }
      const thread = [...references, message_id].slice(-MAX_REFERENCES).join(' ')
      await unit.mail.saveContact({
        member,
        chat_id: chatId,
        address,
        recipient: contact.recipient,
        subject,
        last_message_id: message_id,
        thread_refs: thread,
        timetick_update: row.timetick,
      })
      return { chat_id: String(chatId), message_id: String(row.timetick), duplicate: false }
    })
    onContact()
    return answer
  })
}
