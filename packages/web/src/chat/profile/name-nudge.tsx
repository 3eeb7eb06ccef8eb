import { useState } from 'preact/hooks'
import { fallbackName } from '../../people/people-names.ts'
import { localStorageOrNone } from '../../start-up.ts'

/** The localStorage key that remembers "Not now" for one person on this browser. */
const dismissedKey = (crmId: string) => `atrium.name-nudge.dismissed.${crmId}`

interface NameNudgeProps {
  crmId: string
  busy: boolean
  /** Saves the display name: the name as saved, or the failure's text. */
  onSave: (name: string) => Promise<{ saved: string } | { failure: string }>
}

/**
 * For a person without a display name, who sees their own email above the chats while everyone
 * else sees "User 1234": says so and asks for a name in place. "Not now" hides it on this browser
 * for this person; the Profile panel keeps the same field.
 */
export function NameNudge({ crmId, busy, onSave }: NameNudgeProps) {
  const storage = localStorageOrNone()
  const [hidden, setHidden] = useState(() => storage?.getItem(dismissedKey(crmId)) === '1')
  const [name, setName] = useState('')
  const [error, setError] = useState('')
  if (hidden) return null

  async function submit(event: Event) {
    event.preventDefault()
    if (name.trim() === '') return setError('Type a name: spaces alone are not one.')
    const result = await onSave(name)
    setError('failure' in result ? result.failure : '')
  }

  function notNow() {
    storage?.setItem(dismissedKey(crmId), '1')
    setHidden(true)
  }

  return (
    <section class="name-nudge" aria-labelledby="name-nudge-title">
      <p id="name-nudge-title">
        Others see you as <strong>{fallbackName(crmId)}</strong>. What name should they see?
      </p>
      <form onSubmit={submit}>
        <label for="name-nudge-field" class="visually-hidden">
          Your name
        </label>
        <input
          id="name-nudge-field"
          maxLength={100}
          required
          autocomplete="name"
          placeholder="Your name"
          value={name}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? 'name-nudge-error' : undefined}
          onInput={(event) => setName(event.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          Use this name
        </button>
        <button type="button" class="secondary" onClick={notNow}>
          Not now
        </button>
      </form>
      {error && (
        <p id="name-nudge-error" class="form-error" role="alert">
          {error}
        </p>
      )}
    </section>
  )
}
