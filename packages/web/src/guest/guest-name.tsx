import { useState } from 'preact/hooks'
import type { ChatApi } from '../api/chat-api.ts'
import { failureText } from '../api/envelope.ts'

/** Lets a guest give the name others see them by (update_profile is open to guests). */
export function GuestName({ api }: { api: ChatApi }) {
  const [name, setName] = useState('')
  const [note, setNote] = useState('')
  const [busy, setBusy] = useState(false)

  async function save(event: Event) {
    event.preventDefault()
    setBusy(true)
    try {
      setNote(`Others see you as ${(await api.updateProfile(name.trim())).name}.`)
    } catch (failure) {
      setNote(failureText(failure))
    } finally {
      setBusy(false)
    }
  }

  return (
    <details class="guest-name">
      <summary>Your name</summary>
      <form onSubmit={save}>
        <label for="guest-name">Name others see</label>
        <input
          id="guest-name"
          name="name"
          maxLength={100}
          required
          value={name}
          onInput={(event) => setName(event.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          Save
        </button>
        {note && <p role="status">{note}</p>}
      </form>
    </details>
  )
}
