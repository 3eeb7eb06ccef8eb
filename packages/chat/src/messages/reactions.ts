import { ApiError, ChatMessFlags, hasFlag, LinkKind } from '@atrium/platform'
import type { Caller } from '../access.ts'
import type { Store } from '../store.ts'
import { requireMessage, toMessageViews } from './message-rows.ts'

/** Longest reaction, in UTF-16 code units (an emoji with modifiers can take several). */
export const MAX_REACTION = 32

/**
 * Adds or removes the caller's reaction with this emoji on a message. A reaction is its own row
 * (linkKind = reaction) aggregated under its target; removing soft-deletes that row.
 * `mode` 'add' leaves an existing reaction in place instead of removing it.
 */
export async function toggleReaction(
  store: Store,
  caller: Caller,
  messageId: number,
  emoji: string,
  mode: 'toggle' | 'add',
  /** The chat the caller named, when it named one: the message must be in it. */
  chatId?: number,
) {
  if (emoji === '' || emoji.length > MAX_REACTION) {
    throw new ApiError('InvalidRequest', `a reaction is 1 to ${MAX_REACTION} characters`)
  }
  const { added, target } = await store.transact(async (unit) => {
    const { message: target, chat } = await requireMessage(unit, messageId, caller)
    if (chatId !== undefined && target.chat_id !== chatId)
      throw new ApiError('MessageNotFound', 'the message is in another chat')
    if (hasFlag(target.flags, ChatMessFlags.Deleted)) throw new ApiError('MessageDeleted')
    if (target.link_kind === LinkKind.Reaction) throw new ApiError('InvalidRequest', 'a reaction cannot be reacted to')
    if (chat.archived) throw new ApiError('ChatArchived')
    const existing = await unit.messages.findReaction(target.timetick, caller.member, emoji)
    if (existing && mode === 'add') return { added: true, target }
    const tick = store.nextTick()
    // The database decides between parallel requests (migration 0009): only the request that
    // really inserted or removed the row records the change; the others found the state they
    // asked for already made, and answer it without an event.
    const changed = existing
      ? await unit.messages.removeReaction(existing.timetick, tick)
      : await unit.messages.insertReaction({
          timetick: tick,
          timetick_update: tick,
          chat_id: target.chat_id,
          owner: caller.member,
          content: emoji,
          file_id: 0,
          file_name: '',
          file_size: 0,
          file_type: '',
          flags: 0,
          linked_message_id: target.timetick,
          link_kind: LinkKind.Reaction,
          forwarded_from: 0,
          edited: 0,
        })
    if (!changed) return { added: !existing, target }
    await unit.emit({
      chat_id: target.chat_id,
      type: 'ReactionChanged',
      data: {
        message_id: String(target.timetick),
        chat_id: String(target.chat_id),
        emoji,
        by: String(caller.member),
        added: !existing,
      },
      app_id: chat.app_id,
    })
    return { added: !existing, target }
  })
  const [message] = await toMessageViews(store, [target], caller.member)
  return { added, message: message! }
}
