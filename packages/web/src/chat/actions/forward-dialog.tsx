import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { ChatApi } from '../../api/chat-api.ts'
import type { ChatView, MessageView } from '../../api/chat-types.ts'
import { failureText } from '../../api/envelope.ts'
import { chatKind, mayPost } from '../message/names.ts'

interface ForwardDialogProps {
  api: ChatApi
  message: MessageView
  /** The chat the message is in; the others are offered. */
  fromChatId: string
  onForwarded: (target: ChatView) => void
  onClose: () => void
}

/** Picks another chat of the caller that they may post in, and forwards the message there. */
export function ForwardDialog({ api, message, fromChatId, onForwarded, onClose }: ForwardDialogProps) {
  const [targets, setTargets] = useState<ChatView[]>()
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')
  const panel = useRef<HTMLElement>(null)

  useEffect(() => {
    api
      .getChats()
      .then((chats) => setTargets(chats.filter((chat) => chat.id !== fromChatId && mayPost(chat))))
      .catch((failure) => setError(failureText(failure)))
  }, [api, fromChatId])

  useLayoutEffect(() => {
    panel.current?.querySelector<HTMLElement>('.forward-target, button')?.focus()
  }, [targets])

  async function forward(target: ChatView) {
    setBusy(true)
    setError('')
    try {
      await api.forwardMessage(message.id, target.id)
      onForwarded(target)
    } catch (failure) {
      setError(failureText(failure))
      setBusy(false)
    }
  }

  return (
    <section
      class="forward-panel"
      role="dialog"
      aria-label="Forward message"
      ref={panel}
      onKeyDown={(event) => {
        if (event.key === 'Escape') onClose()
      }}
    >
      <h3>Forward to</h3>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      {!targets ? (
        <p class="loading">Loading chats…</p>
      ) : targets.length === 0 ? (
        <p class="empty">No other chat to forward to.</p>
      ) : (
        <ul class="forward-targets">
          {targets.map((chat) => (
            <li key={chat.id}>
              <button type="button" class="forward-target" disabled={busy} onClick={() => forward(chat)}>
                <span class="chat-name">{chat.name}</span>
                <span class="chat-kind">{chatKind(chat)}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      <button type="button" class="secondary" onClick={onClose}>
        Cancel
      </button>
    </section>
  )
}
