import { ChatMessFlags, hasFlag, MemberRole } from '@atrium/platform'
import { contextOf } from '../chats/chat-context.ts'
import { toChatEventData } from '../chats/chat-view.ts'
import { newMemberRow } from '../members/members.repository.ts'
import { recordDeletion } from '../messages/message-rows.ts'
import type { Store, Unit } from '../store.ts'
import type { AdminActionName } from './admin-actions.repository.ts'
import type { NoticeKey } from './admin-shell.ts'

/** An action the operator may not do now; `reason` is the notice shown and the audit's outcome. */
export class Refusal extends Error {
  readonly reason: NoticeKey
  constructor(reason: NoticeKey) {
    super(reason)
    this.reason = reason
  }
}

export interface ActionRequest {
  operator: number
  action: AdminActionName
  target: string
  detail?: string
}

/**
 * Runs one operator action in a transaction that also records it in the audit (outcome `ok`); a
 * refused action changes nothing and is recorded with its reason. Answers the notice to show.
 */
export async function runAction(
  store: Store,
  request: ActionRequest,
  work: (unit: Unit) => Promise<NoticeKey>,
  now = Date.now,
): Promise<{ done?: NoticeKey; failed?: NoticeKey }> {
  const audit = (outcome: string) => ({
    timetick: store.nextTick(),
    crm_id: request.operator,
    action: request.action,
    target: request.target,
    detail: request.detail ?? '',
    at: now(),
    outcome,
  })
  try {
    const done = await store.transact(async (unit) => {
      const notice = await work(unit)
      await unit.adminActions.record(audit('ok'))
      return notice
    })
    return { done }
  } catch (error) {
    if (!(error instanceof Refusal)) throw error
    await store.adminActions.record(audit(error.reason))
    return { failed: error.reason }
  }
}

/** Archives (read-only) or unarchives a chat of any type, announcing it as archive_chat does. */
export function setArchived(store: Store, chatId: number, archived: boolean) {
  return async (unit: Unit): Promise<NoticeKey> => {
    const chat = await unit.chats.find(chatId)
    if (!chat) throw new Refusal('chat-not-found')
    const flag = archived ? 1 : 0
    if (chat.archived !== flag) {
      const changed = { ...chat, archived: flag, timetick_update: store.nextTick() }
      await unit.chats.update(chat.timetick, { archived: flag, timetick_update: changed.timetick_update })
      await unit.emit({
        chat_id: chat.timetick,
        type: 'ChatArchived',
        data: toChatEventData(changed),
        app_id: chat.app_id,
      })
    }
    return archived ? 'archived' : 'unarchived'
  }
}

/** Removes a member (never the owner) and tells the chat and the removed member, as remove_member does. */
export function removeMember(operator: number, chatId: number, member: number) {
  return async (unit: Unit): Promise<NoticeKey> => {
    const chat = await unit.chats.find(chatId)
    if (!chat) throw new Refusal('chat-not-found')
    const target = await unit.members.find(chatId, member)
    if (!target) throw new Refusal('member-not-found')
    if (hasFlag(target.role, MemberRole.Owner)) throw new Refusal('owner-stays')
    await unit.members.remove(chatId, member)
    const data = { chat_id: String(chatId), member: String(member), role: target.role, by: String(operator) }
    await unit.emit({ chat_id: chatId, type: 'MemberRemoved', data, app_id: chat.app_id })
    await unit.emit({ chat_id: chatId, type: 'MemberRemoved', data, app_id: 0, addressee: member })
    return 'member-removed'
  }
}

/** Soft-deletes a message (also in an archived chat), as soft_delete_message does for its owner. */
export function deleteMessage(store: Store, messageId: number) {
  return async (unit: Unit): Promise<NoticeKey> => {
    const message = await unit.messages.find(messageId)
    if (!message) throw new Refusal('message-not-found')
    const chat = await unit.chats.find(message.chat_id)
    if (!chat) throw new Refusal('chat-not-found')
    if (hasFlag(message.flags, ChatMessFlags.Deleted)) return 'message-deleted'
    await unit.messages.update(messageId, {
      flags: message.flags | ChatMessFlags.Deleted,
      timetick_update: store.nextTick(),
    })
    await recordDeletion(unit, chat, messageId, false)
    return 'message-deleted'
  }
}

/** The operator joins a waiting support chat as one of its team (an admin member), to answer the customer. */
export function takeEscalation(store: Store, operator: number, chatId: number) {
  return async (unit: Unit): Promise<NoticeKey> => {
    const chat = await unit.chats.find(chatId)
    if (!chat) throw new Refusal('chat-not-found')
    if (contextOf(chat).context !== 'support') throw new Refusal('not-support-chat')
    if ((await unit.profiles.unknown([operator])).length > 0) throw new Refusal('profile-unknown')
    const row = newMemberRow(chatId, operator, MemberRole.Admin, store.nextTick())
    if (!(await unit.members.add(row))) throw new Refusal('already-member')
    const data = { chat_id: String(chatId), member: String(operator), role: row.role, by: String(operator) }
    await unit.emit({ chat_id: chatId, type: 'MemberAdded', data, app_id: chat.app_id })
    return 'escalation-taken'
  }
}
