import { timetickTime } from '@atrium/platform'
import { Type } from 'typebox'
import type { MessageRow } from '../messages/messages.repository.ts'

/** Why a call ended (docs/calls.md, "States"). */
export const END_REASONS = ['completed', 'cancelled', 'rejected', 'missed', 'busy', 'failed'] as const
export type EndReason = (typeof END_REASONS)[number]

export type CallMedia = 'audio' | 'video'
export type CallState = 'ringing' | 'connected' | 'ended'

/**
 * The call-content record (spec: CallMessageContent), stored as the JSON content of the call's
 * chat_mess row (Call flag). Times are ISO strings, '' until they happen; ids are decimal strings.
 */
export interface CallMessageContent {
  media: CallMedia
  state: CallState
  caller: string
  callee: string
  answered_at: string
  ended_at: string
  /** Whole seconds from answer to end; 0 for a call that never connected. */
  duration: number
  /** '' until the call ended. */
  end_reason: EndReason | ''
}

/** A call as operations and events show it: its record with its ids and start time. */
export const CallView = Type.Object({
  call_id: Type.String({ description: 'The id of the call: its message row in the chat.' }),
  chat_id: Type.String(),
  media: Type.Union([Type.Literal('audio'), Type.Literal('video')]),
  state: Type.Union([Type.Literal('ringing'), Type.Literal('connected'), Type.Literal('ended')]),
  caller: Type.String(),
  callee: Type.String(),
  started_at: Type.String({ description: 'ISO time the call was placed.' }),
  answered_at: Type.String({ description: "ISO time it was answered; '' when it was not." }),
  ended_at: Type.String({ description: "ISO time it ended; '' while active." }),
  duration: Type.Integer({ description: 'Seconds from answer to end; 0 when it never connected.' }),
  end_reason: Type.Union(
    [
      Type.Literal('completed'),
      Type.Literal('cancelled'),
      Type.Literal('rejected'),
      Type.Literal('missed'),
      Type.Literal('busy'),
      Type.Literal('failed'),
      Type.Literal(''),
    ],
    { description: "Why the call ended (END_REASONS); '' while active." },
  ),
})

/** The record a new call starts with. */
export function ringingRecord(media: CallMedia, caller: number, callee: number): CallMessageContent {
  return {
    media,
    state: 'ringing',
    caller: String(caller),
    callee: String(callee),
    answered_at: '',
    ended_at: '',
    duration: 0,
    end_reason: '',
  }
}

/** The record of a call row (its content was written by this module, so it parses). */
export function recordOf(row: Pick<MessageRow, 'content'>): CallMessageContent {
  return JSON.parse(row.content) as CallMessageContent
}

/** The record once the call ended at `now` for `reason`, with its duration when it had connected. */
export function endedRecord(record: CallMessageContent, reason: EndReason, now: number): CallMessageContent {
  const answered = record.answered_at === '' ? 0 : Date.parse(record.answered_at)
  return {
    ...record,
    state: 'ended',
    ended_at: new Date(now).toISOString(),
    duration: answered === 0 ? 0 : Math.max(0, Math.round((now - answered) / 1000)),
    end_reason: reason,
  }
}

/** Shapes a call row for clients. */
export function toCallView(row: Pick<MessageRow, 'timetick' | 'chat_id' | 'content'>) {
  return {
    call_id: String(row.timetick),
    chat_id: String(row.chat_id),
    started_at: new Date(timetickTime(row.timetick)).toISOString(),
    ...recordOf(row),
  }
}
