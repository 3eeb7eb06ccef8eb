import { useState } from 'preact/hooks'

interface ComposerProps {
  /** Sends the text; rejects with a message for the person when it failed. */
  onSend: (text: string) => Promise<void>
}

/** The chat module's limit on a message's content. */
const MAX_LENGTH = 16_384

/** The message field: Enter sends, Shift+Enter starts a new line. */
export function Composer({ onSend }: ComposerProps) {
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

  function keyDown(event: KeyboardEvent) {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault()
      send()
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
      <label for="composer-text" class="visually-hidden">
        Message
      </label>
      <textarea
        id="composer-text"
        name="message"
        rows={2}
        maxLength={MAX_LENGTH}
        placeholder="Write a message"
        value={text}
        onInput={(event) => setText(event.currentTarget.value)}
        onKeyDown={keyDown}
      />
      <button type="submit" disabled={sending || text.trim() === ''}>
        Send
      </button>
    </form>
  )
}
