/**
 * How the client says what a call was: a conversation's call row ("Outgoing video call · 2:31",
 * "Missed call"), the chat list's preview and the history's lines. Pure, so it is tested alone.
 */

export type CallMedia = 'audio' | 'video'
export type CallState = 'ringing' | 'connected' | 'ended'
export type EndReason = 'completed' | 'cancelled' | 'rejected' | 'missed' | 'busy' | 'failed' | ''

/** The call-content record of a call row (docs/calls.md, "The call record"). */
export interface CallRecord {
  media: CallMedia
  state: CallState
  caller: string
  callee: string
  answered_at: string
  ended_at: string
  duration: number
  end_reason: EndReason
}

/** A call as the call operations and CallUpdated events show it. */
export interface CallView extends CallRecord {
  call_id: string
  chat_id: string
  started_at: string
}

/** The record of a call row's content, or undefined when it is not one (a damaged or foreign row). */
export function parseCallRecord(content: string): CallRecord | undefined {
  try {
    const record = JSON.parse(content) as Partial<CallRecord>
    if (typeof record.caller !== 'string' || typeof record.state !== 'string') return undefined
    return record as CallRecord
  } catch {
    return undefined
  }
}

/** A duration as a clock shows it: 0:42, 2:31, 1:02:03. */
export function formatDuration(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds))
  const hours = Math.floor(whole / 3600)
  const minutes = Math.floor((whole % 3600) / 60)
  const secs = String(whole % 60).padStart(2, '0')
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${secs}` : `${minutes}:${secs}`
}

/** A duration in words for screen readers: "2 minutes 31 seconds". */
export function spokenDuration(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds))
  const parts: string[] = []
  const hours = Math.floor(whole / 3600)
  const minutes = Math.floor((whole % 3600) / 60)
  const secs = whole % 60
  if (hours) parts.push(`${hours} hour${hours === 1 ? '' : 's'}`)
  if (minutes) parts.push(`${minutes} minute${minutes === 1 ? '' : 's'}`)
  if (secs || parts.length === 0) parts.push(`${secs} second${secs === 1 ? '' : 's'}`)
  return parts.join(' ')
}

/**
 * The one-line summary of a call for `me`, as Telegram and Element show it: who called whom, and
 * how it went. Missed and declined calls read from the side they happened to.
 */
export function callSummary(record: CallRecord, me: string): string {
  const outgoing = record.caller === me
  const kind = record.media === 'video' ? 'video call' : 'call'
  const Kind = record.media === 'video' ? 'Video call' : 'Call'
  switch (record.state) {
    case 'ringing':
      return outgoing ? `Calling… (${kind})` : `Incoming ${kind}`
    case 'connected':
      return `${Kind} in progress`
    case 'ended':
      break
  }
  switch (record.end_reason) {
    case 'completed':
      return `${outgoing ? 'Outgoing' : 'Incoming'} ${kind} · ${formatDuration(record.duration)}`
    case 'failed':
      return record.duration > 0 ? `${Kind} dropped · ${formatDuration(record.duration)}` : `${Kind} failed`
    case 'missed':
      return outgoing ? `${Kind}: no answer` : `Missed ${kind}`
    case 'rejected':
      return outgoing ? `${Kind} declined` : `Declined ${kind}`
    case 'cancelled':
      return outgoing ? `Cancelled ${kind}` : `Missed ${kind}`
    case 'busy':
      return outgoing ? `${Kind}: line busy` : `Missed ${kind} (you were busy)`
    default:
      return Kind
  }
}

/** True for a call the person did not take: shown in red in the history and the conversation. */
export function isMissed(record: CallRecord, me: string): boolean {
  if (record.caller === me || record.state !== 'ended') return false
  return record.end_reason === 'missed' || record.end_reason === 'cancelled' || record.end_reason === 'busy'
}
