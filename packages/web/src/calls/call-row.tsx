import { callSummary, isMissed, parseCallRecord, spokenDuration } from './call-words.ts'

/** A call in the conversation, as a readable line: "📞 Outgoing call · 2:31", "📞 Missed call". */
export function CallRow({ content, me }: { content: string; me: string }) {
  const record = parseCallRecord(content)
  if (!record) return <div class="message-content call-row">📞 Call</div>
  return (
    <div class={isMissed(record, me) ? 'message-content call-row missed' : 'message-content call-row'}>
      <span aria-hidden="true">{record.media === 'video' ? '📹' : '📞'}</span>
      <span>
        {callSummary(record, me)}
        {record.duration > 0 && <span class="visually-hidden"> ({spokenDuration(record.duration)})</span>}
      </span>
    </div>
  )
}
