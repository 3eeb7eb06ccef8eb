import { ApiError, ChatMessFlags, ChatType, hasFlag, type Service } from '@atrium/platform'
import { isChatAdmin } from '../access.ts'
import type { CallerResolver } from '../caller.ts'
import type { Store } from '../store.ts'
import { recordDeletion, requireMessage, toMessageViews } from './message-rows.ts'
import { hardDeleteMessage, messageAction, toggleReaction as toggleReactionSchema } from './messages.schema.ts'
import { toggleReaction } from './reactions.ts'

export interface MessageActionsPluginOptions {
  store: Store
  resolveCaller: CallerResolver
  /** Whether hard_delete_message is enabled by configuration. */
  hardDelete: boolean
}

/** pin_message, unpin_message, toggle_message_reaction, soft_delete_message, hard_delete_message. */
export default async function messageActionsPlugin(
  app: Service,
  { store, resolveCaller, hardDelete }: MessageActionsPluginOptions,
) {
  // Pin and unpin toggle the Pin flag; in groups and channels only admins pin, in a private chat either side.
  for (const [path, pin] of [
    ['/pin_message', true],
    ['/unpin_message', false],
  ] as const) {
    app.post(path, { schema: messageAction }, async (request) => {
      const caller = await resolveCaller(request)
      const row = await store.transact(async (unit) => {
        const { message, chat, membership } = await requireMessage(unit, Number(request.body.message_id), caller)
        if (chat.type !== ChatType.Private && !isChatAdmin(membership.role)) throw new ApiError('NotChatAdmin')
        if (chat.archived) throw new ApiError('ChatArchived')
        if (hasFlag(message.flags, ChatMessFlags.Deleted)) throw new ApiError('MessageDeleted')
        if (hasFlag(message.flags, ChatMessFlags.Pin) === pin) return message
        const changed = {
          ...message,
          flags: pin ? message.flags | ChatMessFlags.Pin : message.flags & ~ChatMessFlags.Pin,
          timetick_update: store.nextTick(),
        }
        await unit.messages.update(message.timetick, { flags: changed.flags, timetick_update: changed.timetick_update })
        await unit.emit({
          chat_id: chat.timetick,
          type: pin ? 'MessagePinned' : 'MessageUnpinned',
          data: { message_id: String(message.timetick), chat_id: String(chat.timetick), by: String(caller.member) },
          app_id: chat.app_id,
        })
        return changed
      })
      return (await toMessageViews(store, [row], caller.member))[0]!
    })
  }

  app.post('/toggle_message_reaction', { schema: toggleReactionSchema }, async (request) => {
    const caller = await resolveCaller(request)
    return toggleReaction(store, caller, Number(request.body.message_id), request.body.emoji.trim(), 'toggle')
  })

  app.post('/soft_delete_message', { schema: messageAction }, async (request) => {
    const caller = await resolveCaller(request)
    const row = await store.transact(async (unit) => {
      const { message, chat, membership } = await requireMessage(unit, Number(request.body.message_id), caller)
      if (message.owner !== caller.member && !isChatAdmin(membership.role)) throw new ApiError('NotMessageOwner')
      if (chat.archived) throw new ApiError('ChatArchived')
      if (hasFlag(message.flags, ChatMessFlags.Deleted)) return message
      const deleted = { ...message, flags: message.flags | ChatMessFlags.Deleted, timetick_update: store.nextTick() }
      await unit.messages.update(message.timetick, { flags: deleted.flags, timetick_update: deleted.timetick_update })
      await recordDeletion(unit, chat, message.timetick, false)
      return deleted
    })
    return (await toMessageViews(store, [row], caller.member))[0]!
  })

  app.post('/hard_delete_message', { schema: hardDeleteMessage }, async (request) => {
    const caller = await resolveCaller(request)
    if (!hardDelete) throw new ApiError('HardDeleteDisabled')
    await store.transact(async (unit) => {
      const { message, chat, membership } = await requireMessage(unit, Number(request.body.message_id), caller)
      if (message.owner !== caller.member && !isChatAdmin(membership.role)) throw new ApiError('NotMessageOwner')
      await unit.messages.delete(message.timetick)
      await recordDeletion(unit, chat, message.timetick, true)
    })
    return { deleted: request.body.message_id }
  })
}
