import { useState } from 'preact/hooks'
import type { ChatApi } from '../../api/chat-api.ts'
import type { ChatView } from '../../api/chat-types.ts'
import { failureText, isFailure } from '../../api/envelope.ts'
import { unknownPersonText } from '../../people/people-names.ts'
import { PeoplePicker } from '../../people/people-picker.tsx'

interface NewPrivateChatProps {
  api: ChatApi
  onOpened: (chat: ChatView) => void
}

/**
 * Starts (or reopens) a private chat with a person found by name or email (GET /auth/v1/people),
 * or by user id as a fallback: the chat module's create_private_chat.
 */
export function NewPrivateChat({ api, onOpened }: NewPrivateChatProps) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')

  async function open(person: { id: string }) {
    setBusy(true)
    setError('')
    try {
      const { chat } = await api.createPrivateChat(person.id)
      onOpened(chat)
    } catch (failure) {
      if (isFailure(failure, 'UserNotFound')) setError(unknownPersonText(person.id))
      else if (isFailure(failure, 'InvalidRequest')) setError('That is you. Choose someone else.')
      else setError(failureText(failure))
    } finally {
      setBusy(false)
    }
  }

  return (
    <details class="new-chat">
      <summary>New private chat</summary>
      <PeoplePicker id="new-chat-person" label="Find a person" onPick={open} disabled={busy} />
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
    </details>
  )
}
