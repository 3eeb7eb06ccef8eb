import { useState } from 'preact/hooks'
import type { ChatView } from '../../api/chat-types.ts'
import { isMutedNow, MUTE_CHOICES, muteText } from '../mute.ts'
import { useMuteEnds } from '../use-mute-ends.ts'

/** What update_member takes to mute or unmute (docs/chat-api.md). */
export type MuteChange = { muted: boolean } | { muted_until: string }

interface MuteControlProps {
  chat: ChatView
  busy: boolean
  onChange: (change: MuteChange) => void
}

/**
 * Chat info's mute: unmuted, a button that offers how long (an hour, 8 hours, a day, a week, or
 * until unmuted); muted, until when, and a button that unmutes. A timed mute's end shows by itself.
 */
export function MuteControl({ chat, busy, onChange }: MuteControlProps) {
  const [choosing, setChoosing] = useState(false)
  useMuteEnds([chat])
  if (isMutedNow(chat)) {
    return (
      <>
        <p class="mute-state" data-testid="mute-state">
          <span aria-hidden="true">🔕 </span>
          {muteText(chat)}
        </p>
        <button type="button" class="secondary" disabled={busy} onClick={() => onChange({ muted: false })}>
          Unmute notifications
        </button>
      </>
    )
  }
  if (!choosing) {
    return (
      <button type="button" class="secondary" disabled={busy} onClick={() => setChoosing(true)}>
        Mute notifications
      </button>
    )
  }
  const choose = (ms: number | undefined) => {
    setChoosing(false)
    onChange(ms === undefined ? { muted: true } : { muted_until: new Date(Date.now() + ms).toISOString() })
  }
  return (
    <fieldset class="confirm">
      <legend>Mute notifications</legend>
      {MUTE_CHOICES.map(({ label, ms }) => (
        <button key={label} type="button" class="secondary" disabled={busy} onClick={() => choose(ms)}>
          {label}
        </button>
      ))}
      <button type="button" class="secondary" onClick={() => setChoosing(false)}>
        Cancel
      </button>
    </fieldset>
  )
}
