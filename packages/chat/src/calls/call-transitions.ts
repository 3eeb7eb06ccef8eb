import { ApiError, ChatMessFlags, hasFlag } from '@atrium/platform'
import type { Caller } from '../access.ts'
import type { MessageRow } from '../messages/messages.repository.ts'
import type { Store, Unit } from '../store.ts'
import { type CallMessageContent, type EndReason, endedRecord, recordOf, toCallView } from './call-record.ts'

/** A call row and its record, read for one of its two participants. */
export interface CallAccess {
  row: MessageRow
  record: CallMessageContent
  /** The other participant. */
  peer: number
  appId: number
}

/**
 * The call `callId` as its participant `caller` sees it; CallNotFound for anyone else and for ids
 * that are not call rows, so nobody learns of other people's calls.
 */
export async function requireCall(unit: Pick<Unit, 'messages' | 'chats'>, callId: number, caller: Caller) {
  const row = await unit.messages.find(callId)
  if (!row || !hasFlag(row.flags, ChatMessFlags.Call) || hasFlag(row.flags, ChatMessFlags.Deleted)) {
    throw new ApiError('CallNotFound', `call ${callId} not found`)
  }
  const record = recordOf(row)
  const me = String(caller.member)
  if (record.caller !== me && record.callee !== me) throw new ApiError('CallNotFound', `call ${callId} not found`)
  const chat = await unit.chats.find(row.chat_id)
  return {
    row,
    record,
    peer: Number(record.caller === me ? record.callee : record.caller),
    appId: chat?.app_id ?? 0,
  } satisfies CallAccess
}

/** Refuses an operation on a call whose state is not `wanted`, naming the state it is in. */
export function requireState(record: CallMessageContent, wanted: CallMessageContent['state'], what: string): void {
  if (record.state !== wanted) {
    throw new ApiError('CallStateConflict', `the call is ${record.state}; only a ${wanted} call can be ${what}`, {
      state: record.state,
    })
  }
}

/** Writes a call's new record on its row and tells both participants (CallUpdated). */
export async function recordCall(
  unit: Unit,
  store: Pick<Store, 'nextTick'>,
  access: Pick<CallAccess, 'row' | 'appId'>,
  record: CallMessageContent,
): Promise<MessageRow> {
  const tick = store.nextTick()
  const row = { ...access.row, content: JSON.stringify(record), timetick_update: tick }
  await unit.messages.update(row.timetick, { content: row.content, timetick_update: tick })
  await unit.emit({ chat_id: row.chat_id, type: 'CallUpdated', data: toCallView(row), app_id: access.appId })
  return row
}

/**
 * Ends an active call at `now`: frees both lines, then records the end, its reason (chosen from
 * the record as it is after the lines were taken, so a racing answer is seen) and its duration.
 * Undefined when the call had ended already (another operation, instance or the heartbeat won).
 */
export async function endCall(
  unit: Unit,
  store: Pick<Store, 'nextTick'>,
  call: { callId: number; appId: number },
  reasonFor: (record: CallMessageContent) => EndReason,
  now: number,
): Promise<MessageRow | undefined> {
  if (!(await unit.calls.release(call.callId))) return undefined
  const row = await unit.messages.find(call.callId)
  if (!row) return undefined
  const record = recordOf(row)
  return recordCall(unit, store, { row, appId: call.appId }, endedRecord(record, reasonFor(record), now))
}
