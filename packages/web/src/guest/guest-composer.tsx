import { useState } from 'preact/hooks'
import { lengthState } from '../chat/conversation/composer-length.ts'
import { LengthCounter } from '../chat/conversation/length-counter.tsx'

/**
 * A guest's message field: text only; Enter sends, Shift+Enter starts a new line. Near the length
 * limit it counts down, past it it says so and does not send (as the messenger's composer).
 */
export function GuestComposer({ onSend }: { onSend: (text: string) => Promise<void> }) {
  const [text, setText] = useState('')
  const [sending, setSending] = useState(false)
  const [error, setError] = useState('')
  const length = lengthState(text)

  async function send() {
    const content = text.trim()
    if (!content || sending || length.over) return
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
        placeholder="Write a message"
        aria-invalid={length.over}
        aria-describedby={length.near ? 'guest-composer-length' : undefined}
        value={text}
        onInput={(event) => setText(event.currentTarget.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
            event.preventDefault()
            send()
          }
        }}
      />
      <button type="submit" disabled={sending || length.over || text.trim() === ''}>
        Send
      </button>
      <LengthCounter id="guest-composer-length" length={length} />
    </form>
  )
}
