import { useState } from 'preact/hooks'
import type { ChatApi } from '../../api/chat-api.ts'
import type { ChatView, MemberView } from '../../api/chat-types.ts'
import { failureText, isFailure } from '../../api/envelope.ts'
import { unknownPersonText } from '../../people/people-names.ts'
import { PeoplePicker } from '../../people/people-picker.tsx'

interface AddMemberProps {
  api: ChatApi
  chat: ChatView
  onAdded: (member: MemberView) => void
}

/** Adds a person found by name or email (or by user id) to a group or channel (add_chat_member), optionally as admin. */
export function AddMember({ api, chat, onAdded }: AddMemberProps) {
  const [admin, setAdmin] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')

  async function add(person: { id: string }) {
    setBusy(true)
    setError('')
    try {
      onAdded(await api.addChatMember(chat.id, person.id, admin))
      setAdmin(false)
    } catch (failure) {
      setError(isFailure(failure, 'UserNotFound') ? unknownPersonText(person.id) : failureText(failure))
    } finally {
      setBusy(false)
    }
  }

  return (
    <div class="add-member">
      <PeoplePicker id="add-member" label="Add a member" onPick={add} disabled={busy} />
      <label class="checkbox">
        <input type="checkbox" checked={admin} onChange={(event) => setAdmin(event.currentTarget.checked)} /> as admin
      </label>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
    </div>
  )
}
