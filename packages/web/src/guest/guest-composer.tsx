import { useState } from 'preact/hooks'

/** The chat module's limit on a message's content. */
const MAX_LENGTH = 16_384

/** A guest's message field: text only; Enter sends, Shift+Enter starts a new line. */
export function GuestComposer({ onSend }: { onSend: (text: string) => Promise<void> }) {
  const [text, setText] = useState('')
  const [sending, setSending] = useState(false)
  const [error, setError] = useState('')

  async function send() {
    const content = text.trim()
    if (!content || sending) return
    setSending(true)
    setError('')
    try {
      await onSend(content)
      setText('')
    } catch (failure) {
      setError((failure as Error).message)
    } finally {
      setSending(false)
    }
  }

  return (
    <form
      class="composer"
      onSubmit={(event) => {
        event.preventDefault()
        send()
      }}
    >
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      <label for="guest-composer-text" class="visually-hidden">
        Message
      </label>
      <textarea
        id="guest-composer-text"
        name="message"
        rows={2}
        maxLength={MAX_LENGTH}
        placeholder="Write a message"
        value={text}
        onInput={(event) => setText(event.currentTarget.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
            event.preventDefault()
            send()
          }
        }}
      />
      <button type="submit" disabled={sending || text.trim() === ''}>
        Send
      </button>
    </form>
  )
}
