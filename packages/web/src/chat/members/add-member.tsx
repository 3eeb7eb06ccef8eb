import { useState } from 'preact/hooks'
import type { ChatApi } from '../../api/chat-api.ts'
import type { ChatView, MemberView } from '../../api/chat-types.ts'
import { failureText } from '../../api/envelope.ts'
import { isUserId } from '../manage/member-ids.ts'

interface AddMemberProps {
  api: ChatApi
  chat: ChatView
  onAdded: (member: MemberView) => void
}

/** Adds someone to a group or channel by their user id (add_chat_member), optionally as admin. */
export function AddMember({ api, chat, onAdded }: AddMemberProps) {
  const [member, setMember] = useState('')
  const [admin, setAdmin] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')

  async function submit(event: Event) {
    event.preventDefault()
    const id = member.trim()
    if (!isUserId(id)) {
      setError('A user id is a number, e.g. 1002.')
      return
    }
    setBusy(true)
    setError('')
    try {
      onAdded(await api.addChatMember(chat.id, id, admin))
      setMember('')
      setAdmin(false)
    } catch (failure) {
      setError(failureText(failure))
    } finally {
      setBusy(false)
    }
  }

  return (
    <form class="add-member" onSubmit={submit}>
      <label for="add-member-id">Add a member by user id</label>
      <div class="inline-fields">
        <input
          id="add-member-id"
          name="member"
          inputMode="numeric"
          autoComplete="off"
          required
          value={member}
          onInput={(event) => setMember(event.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          Add
        </button>
      </div>
      <label class="checkbox">
        <input type="checkbox" checked={admin} onChange={(event) => setAdmin(event.currentTarget.checked)} /> as admin
      </label>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
    </form>
  )
}
