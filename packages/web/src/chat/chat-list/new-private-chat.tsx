import { useState } from 'preact/hooks'
import type { ChatApi } from '../../api/chat-api.ts'
import type { ChatView } from '../../api/chat-types.ts'
import { failureText, isFailure } from '../../api/envelope.ts'
import { isUserId } from '../manage/member-ids.ts'

interface NewPrivateChatProps {
  api: ChatApi
  onOpened: (chat: ChatView) => void
}

/**
 * Starts (or reopens) a private chat with another person by their user id (CRM id): the chat
 * module's create_private_chat. The gateway has no lookup of other users by email for members.
 */
export function NewPrivateChat({ api, onOpened }: NewPrivateChatProps) {
  const [peer, setPeer] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')

  async function submit(event: Event) {
    event.preventDefault()
    const id = peer.trim()
    if (!isUserId(id)) {
      setError('A user id is a number, e.g. 1002.')
      return
    }
    setBusy(true)
    setError('')
    try {
      const { chat } = await api.createPrivateChat(id)
      setPeer('')
      onOpened(chat)
    } catch (failure) {
      setError(isFailure(failure, 'InvalidRequest') ? 'That is your own id.' : failureText(failure))
    } finally {
      setBusy(false)
    }
  }

  return (
    <details class="new-chat">
      <summary>New private chat</summary>
      <form onSubmit={submit}>
        <label for="new-chat-peer">Their user id</label>
        <input
          id="new-chat-peer"
          name="peer"
          inputMode="numeric"
          autoComplete="off"
          required
          value={peer}
          onInput={(event) => setPeer(event.currentTarget.value)}
        />
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Open chat
        </button>
      </form>
    </details>
  )
}
