import type { Service } from '@atrium/platform'
import {
  ApiError,
  ChatMessFlags,
  fingerprintOf,
  hasFlag,
  LinkKind,
  markReplayed,
  readIdempotencyKey,
} from '@atrium/platform'
import { requireCanPost, requireMember, requireUser } from '../access.ts'
import type { CallerResolver } from '../caller.ts'
import type { Store, Unit } from '../store.ts'
import { attachmentOf } from './attachments.ts'
import { newMessage, postMessage, requireMessage, toMessageViews } from './message-rows.ts'
import { toMessageEventData, toMessageView } from './message-view.ts'
import type { MessageRow } from './messages.repository.ts'
import {
  editMessage,
  forwardMessage,
  getChatFiles,
  getChatMessages,
  requireContentLength,
  sendMessage,
} from './messages.schema.ts'
import { toggleReaction } from './reactions.ts'
import { createSendKeyPruning, sendOnce } from './send-once.ts'

export interface MessagesPluginOptions {
  store: Store
  resolveCaller: CallerResolver
  /** ServiceSecret: verifies the gateway's file tokens. */
  serviceSecret: string
  /** How long a send_message Idempotency-Key is honoured, in hours (IdempotencyKeyHours). */
  keyHours: number
}

/** send_message, get_chat_messages, edit_message, forward_message, get_chat_files. */
export default async function messagesPlugin(
  app: Service,
  { store, resolveCaller, serviceSecret, keyHours }: MessagesPluginOptions,
) {
  const pruneSendKeys = createSendKeyPruning(store, keyHours, app.log)
  app.post('/send_message', { schema: sendMessage }, async (request, reply) => {
    const caller = await resolveCaller(request)
    const key = readIdempotencyKey(request)
    const { chat_id, content, reply_to, reaction_to, widget, file } = request.body
    requireContentLength(content, file === undefined ? 'the message' : 'the caption')
    if (reply_to && reaction_to) throw new ApiError('InvalidRequest', 'give reply_to or reaction_to, not both')
    if (file !== undefined && (widget || reaction_to)) {
      throw new ApiError('InvalidRequest', 'a file is sent as a message or a reply, not with a widget or reaction')
    }
    if (!widget && file === undefined && content.trim() === '') {
      throw new ApiError('InvalidRequest', 'content is empty')
    }
    // A reaction needs no key: adding one twice leaves one (migration 0009).
    if (reaction_to) {
      const { message } = await toggleReaction(
        store,
        caller,
        Number(reaction_to),
        content.trim(),
        'add',
        Number(chat_id),
      )
      return message
    }
    const chatId = Number(chat_id)
    const fields: Partial<MessageRow> = file
      ? { content, ...attachmentOf(serviceSecret, file, caller) }
      : { content: widget ? JSON.stringify(widget) : content, flags: widget ? ChatMessFlags.Widget : 0 }
    // A widget is stored as its JSON in content, so the content cap holds for that text too.
    if (widget) requireContentLength(fields.content!, 'the widget as JSON')
    const fingerprint =
      key === ''
        ? ''
        : fingerprintOf([chat_id, content, reply_to ?? '', widget ? JSON.stringify(widget) : '', file ?? ''])
    // The shared PostgreSQL statement (direct-post.ts) writes text rows only, and a key only when it is new.
    if (!reply_to && !file && store.postDirect) {
      const row = newMessage(store, chatId, caller.member, fields)
      const view = toMessageView(row)
      const stored = key === '' ? undefined : { key, fingerprint, response: JSON.stringify(view) }
      if (stored) pruneSendKeys(Date.now())
      if (await store.postDirect(row, stored)) return view
    }
    async function post(unit: Unit) {
      const access = await requireMember(unit, chatId, caller)
      requireCanPost(access)
      let replyTo: MessageRow | undefined
      if (reply_to) {
        replyTo = (await requireMessage(unit, Number(reply_to), caller)).message
        if (replyTo.chat_id !== chatId) throw new ApiError('MessageNotFound', 'the replied message is in another chat')
      }
      const row = newMessage(store, chatId, caller.member, {
        ...fields,
        ...(replyTo ? { linked_message_id: replyTo.timetick, link_kind: LinkKind.Reply } : {}),
      })
      await postMessage(unit, row, access.chat.app_id)
      return toMessageView(row, { replyTo })
    }
    if (key === '') return store.transact(post)
    pruneSendKeys(Date.now())
    const sent = await sendOnce(
      store,
      { member: caller.member, key, fingerprint, retentionHours: keyHours, now: Date.now() },
      post,
    )
    if (sent.replayed) markReplayed(reply)
    return sent.message
  })

  app.get('/get_chat_messages', { schema: getChatMessages }, async (request) => {
    const caller = await resolveCaller(request)
    const { chat_id, before, after, limit } = request.query
    if (before && after) throw new ApiError('InvalidRequest', 'give before or after, not both')
    const chatId = Number(chat_id)
    const page = {
      before: before === undefined ? undefined : Number(before),
      after: after === undefined ? undefined : Number(after),
      limit: limit + 1,
    }
    // The page is read only for a member, and its reactions beside it: one round trip. An empty
    // page may mean a non-member, whose access check then gives the error.
    const [rows, reactions] = await Promise.all([
      store.messages.page(chatId, caller.member, page),
      store.messages.pageReactions(chatId, caller.member, page),
    ])
    if (rows.length === 0) await requireMember(store, chatId, caller)
    const messages = await toMessageViews(store, rows.slice(0, limit), caller.member, { reactions })
    return { messages, has_more: rows.length > limit }
  })

  app.get('/get_chat_files', { schema: getChatFiles }, async (request) => {
    const caller = await resolveCaller(request)
    requireUser(caller, 'browse files')
    const { chat_id, before, limit } = request.query
    await requireMember(store, Number(chat_id), caller)
    const rows = await store.messages.files(
      Number(chat_id),
      before === undefined ? undefined : Number(before),
      limit + 1,
    )
    return { files: await toMessageViews(store, rows.slice(0, limit), caller.member), has_more: rows.length > limit }
  })

  app.post('/edit_message', { schema: editMessage }, async (request) => {
    const caller = await resolveCaller(request)
    requireContentLength(request.body.content)
    const row = await store.transact(async (unit) => {
      const { message, chat } = await requireMessage(unit, Number(request.body.message_id), caller)
      if (message.owner !== caller.member) throw new ApiError('NotMessageOwner')
      if (hasFlag(message.flags, ChatMessFlags.Deleted)) throw new ApiError('MessageDeleted')
      if (
        message.link_kind === LinkKind.Reaction ||
        (message.flags & (ChatMessFlags.Call | ChatMessFlags.Widget)) !== 0
      ) {
        throw new ApiError('InvalidRequest', 'reactions, widgets and call rows cannot be edited; send a new one')
      }
      if (chat.archived) throw new ApiError('ChatArchived')
      const tick = store.nextTick()
      const edited = { ...message, content: request.body.content, timetick_update: tick, edited: tick }
      await unit.messages.update(message.timetick, { content: edited.content, timetick_update: tick, edited: tick })
      await unit.emit({
        chat_id: chat.timetick,
        type: 'MessageEdited',
        data: toMessageEventData(edited),
        app_id: chat.app_id,
      })
      return edited
    })
    return (await toMessageViews(store, [row], caller.member))[0]!
  })

  app.post('/forward_message', { schema: forwardMessage }, async (request) => {
    const caller = await resolveCaller(request)
    const row = await store.transact(async (unit) => {
      const { message } = await requireMessage(unit, Number(request.body.message_id), caller)
      if (hasFlag(message.flags, ChatMessFlags.Deleted)) throw new ApiError('MessageDeleted')
      // A call row is the record of a call between two people (docs/calls.md), not a message to pass on.
      if (hasFlag(message.flags, ChatMessFlags.Call)) throw new ApiError('InvalidRequest', 'calls cannot be forwarded')
      const target = await requireMember(unit, Number(request.body.to_chat_id), caller)
      requireCanPost(target)
      const row = newMessage(store, target.chat.timetick, caller.member, {
        content: message.content,
        file_id: message.file_id,
        file_name: message.file_name,
        file_size: message.file_size,
        file_type: message.file_type,
        // A forward is a new message: it is neither pinned nor deleted, whatever the original is.
        flags: message.flags & ~(ChatMessFlags.Pin | ChatMessFlags.Deleted),
        // Links point into the source chat, so a forwarded reply or reaction arrives as a plain message.
        // A forward of a forward names the original, as Telegram and Slack show it: who wrote it
        // first, not who passed it on.
        forwarded_from: message.forwarded_from || message.timetick,
      })
      await postMessage(unit, row, target.chat.app_id)
      return row
    })
    return toMessageView(row)
  })
}
