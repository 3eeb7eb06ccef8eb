import { useEffect, useRef, useState } from 'preact/hooks'
import type { MessageView } from '../../api/chat-types.ts'
import { PlainText } from '../message/markdown-content.tsx'

/** What the composer's text is for besides a new message: a reply to a message, or an edit of one's own. */
export type ComposerContext =
  | { kind: 'reply'; message: MessageView; sender: string }
  | { kind: 'edit'; message: MessageView }

interface ComposerProps {
  /** Sends the text (or saves the edit); rejects with a message for the person when it failed. */
  onSend: (text: string) => Promise<void>
  context?: ComposerContext | undefined
  /** Drops the reply or edit, back to writing a new message. */
  onCancelContext: () => void
}

/** The chat module's limit on a message's content. */
const MAX_LENGTH = 16_384

/**
 * The message field: Enter sends, Shift+Enter starts a new line. Replying shows the quoted message
 * above the field; editing fills it with the message's text. Escape cancels either.
 */
export function Composer({ onSend, context, onCancelContext }: ComposerProps) {
  const [text, setText] = useState('')
  const [sending, setSending] = useState(false)
  const [error, setError] = useState('')
  const field = useRef<HTMLTextAreaElement>(null)
  /** The unsent text of a new message, kept while an edit borrows the field. */
  const draft = useRef('')
  const wasEditing = useRef(false)

  const contextKey = context ? `${context.kind}:${context.message.id}` : ''
  const editing = context?.kind === 'edit'
  useEffect(() => {
    if (context?.kind === 'edit') {
      if (!wasEditing.current) draft.current = text
      setText(context.message.content)
    } else if (wasEditing.current) {
      setText(draft.current)
    }
    wasEditing.current = editing
    if (context) field.current?.focus()
  }, [contextKey])

  function cancel() {
    setError('')
    onCancelContext()
  }

  async function send() {
    const content = text.trim()
    if (!content || sending) return
    setSending(true)
    setError('')
    try {
      await onSend(content)
      // After an edit the conversation drops the context, and the effect above restores the draft.
      if (!editing) setText('')
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
    } else if (event.key === 'Escape' && context) {
      event.preventDefault()
      cancel()
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
      {context && (
        <div class="composer-context">
          {context.kind === 'reply' ? (
            <p class="quoted">
              <span class="quoted-label">Replying to {context.sender}</span>
              <span class="quoted-text">
                <PlainText source={context.message.content} />
              </span>
            </p>
          ) : (
            <p class="quoted">
              <span class="quoted-label">Editing your message</span>
            </p>
          )}
          <button type="button" class="secondary" onClick={cancel}>
            {context.kind === 'reply' ? 'Cancel reply' : 'Cancel edit'}
          </button>
        </div>
      )}
      <label for="composer-text" class="visually-hidden">
        Message
      </label>
      <textarea
        id="composer-text"
        ref={field}
        name="message"
        rows={2}
        maxLength={MAX_LENGTH}
        placeholder="Write a message"
        value={text}
        onInput={(event) => setText(event.currentTarget.value)}
        onKeyDown={keyDown}
      />
      <button type="submit" disabled={sending || text.trim() === ''}>
        {editing ? 'Save' : 'Send'}
      </button>
    </form>
  )
}
