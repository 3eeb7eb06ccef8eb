import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { MessageView } from '../../api/chat-types.ts'
import type { Attachment } from '../../files/attachment-state.ts'
import { AttachmentTray } from '../../files/attachment-tray.tsx'
import type { AttachmentsControl } from '../../files/use-attachments.ts'
import { EmojiPicker } from '../emoji/lazy-emoji-picker.ts'
import { PlainText } from '../message/markdown-content.tsx'
import { previewText } from '../message/names.ts'
import { lengthState } from './composer-length.ts'
import { LengthCounter } from './length-counter.tsx'

/** What the composer's text is for besides a new message: a reply to a message, or an edit of one's own. */
export type ComposerContext =
  | { kind: 'reply'; message: MessageView; sender: string }
  | { kind: 'edit'; message: MessageView }

/** Uploaded files to send, one message each; `sent` is told of each file once its message is posted. */
export interface OutgoingFiles {
  items: Attachment[]
  sent: (key: string) => void
}

interface ComposerProps {
  /**
   * Sends the text (or saves the edit), with the tray's files when there are any (the text is the
   * first file's caption); rejects with a message for the person when it failed.
   */
  onSend: (text: string, files?: OutgoingFiles) => Promise<void>
  /** The pending attachments; without them (guests) there is no attach button. */
  attachments?: AttachmentsControl | undefined
  context?: ComposerContext | undefined
  /** Drops the reply or edit, back to writing a new message. */
  onCancelContext: () => void
  /** Called as the person writes a new message or reply (not an edit); throttled by the caller. */
  onTyping?: () => void
  /** The up arrow in the empty field: edits the person's newest message; false when there is none. */
  onEditLast?: () => boolean
  /** The chat's unsent text kept from before (drafts.ts), and where the field's text is kept as it changes. */
  draft?: { initial: string; save: (text: string) => void }
}

/**
 * The message field: Enter sends, Shift+Enter starts a new line. Replying shows the quoted message
 * above the field; editing fills it with the message's text (the up arrow in the empty field edits
 * one's newest message). Escape cancels either. Files come in
 * by the attach button or by pasting them into the field; they upload in the tray above it and are
 * sent with the message once all are up. Near the length limit a counter says how many characters
 * are left; over it, a message says so and Send waits until the text is short enough. Unsent text
 * is kept as the chat's draft, so switching chats or reloading keeps it.
 */
export function Composer({
  onSend,
  attachments,
  context,
  onCancelContext,
  onTyping,
  onEditLast,
  draft: kept,
}: ComposerProps) {
  const [text, setText] = useState(() => kept?.initial ?? '')
  const [sending, setSending] = useState(false)
  const [error, setError] = useState('')
  const field = useRef<HTMLTextAreaElement>(null)
  const picker = useRef<HTMLInputElement>(null)
  const [choosingEmoji, setChoosingEmoji] = useState(false)
  /** Where the caret goes once an inserted emoji is in the field. */
  const caret = useRef<number | undefined>(undefined)
  /** The unsent text of a new message, kept while an edit borrows the field. */
  const draft = useRef('')
  const wasEditing = useRef(false)

  const contextKey = context ? `${context.kind}:${context.message.id}` : ''
  const editing = context?.kind === 'edit'
  // A layout effect: the field holds the message's text (and the focus) before the next key or
  // click, which would otherwise land in the empty field and then be overwritten.
  useLayoutEffect(() => {
    if (context?.kind === 'edit') {
      if (!wasEditing.current) draft.current = text
      setText(context.message.content)
    } else if (wasEditing.current) {
      setText(draft.current)
    }
    wasEditing.current = editing
    if (context) field.current?.focus()
  }, [contextKey])

  // The text of a new message or reply is the draft; an edit's text is not.
  useEffect(() => {
    if (!editing) kept?.save(text)
  }, [text, editing])

  function cancel() {
    setError('')
    onCancelContext()
  }

  const files = editing ? [] : (attachments?.items ?? [])
  const waiting = files.length > 0 && !attachments?.summary.ready
  const length = lengthState(text)
  const canSend = !sending && !waiting && !length.over && (text.trim() !== '' || files.length > 0)

  async function send() {
    const content = text.trim()
    if (!canSend) return
    setSending(true)
    setError('')
    const sentKeys = new Set<string>()
    const outgoing =
      files.length > 0 && attachments
        ? {
            items: files,
            sent(key: string) {
              sentKeys.add(key)
              attachments.sent(key)
            },
          }
        : undefined
    try {
      await onSend(content, outgoing)
      // After an edit the conversation drops the context, and the effect above restores the draft.
      if (!editing) setText('')
    } catch (failure) {
      // The caption went with the first file: it must not be sent twice.
      if (sentKeys.size > 0) setText('')
      setError((failure as Error).message)
    } finally {
      setSending(false)
    }
  }

  useEffect(() => {
    void EmojiPicker.preload().catch(() => {})
  }, [])

  // After an emoji went in: the focus back in the field, the caret right after the emoji.
  useLayoutEffect(() => {
    if (caret.current === undefined) return
    field.current?.focus()
    field.current?.setSelectionRange(caret.current, caret.current)
    caret.current = undefined
  }, [text])

  /** Puts the emoji where the caret was (over the selected text, if any). */
  function insertEmoji(emoji: string) {
    const start = field.current?.selectionStart ?? text.length
    const end = field.current?.selectionEnd ?? text.length
    caret.current = start + emoji.length
    setText(text.slice(0, start) + emoji + text.slice(end))
    setChoosingEmoji(false)
  }

  function attach(list: Iterable<File>) {
    if (!attachments) return
    setError(attachments.add(list))
  }

  function paste(event: ClipboardEvent) {
    const pasted = Array.from(event.clipboardData?.files ?? [])
    if (pasted.length === 0 || !attachments || editing) return
    event.preventDefault()
    attach(pasted)
  }

  function keyDown(event: KeyboardEvent) {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault()
      send()
    } else if (event.key === 'Escape' && context) {
      event.preventDefault()
      cancel()
    } else if (event.key === 'ArrowUp' && !context && text === '' && onEditLast?.()) {
      event.preventDefault()
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
                <PlainText source={previewText(context.message)} />
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
      {attachments && !editing && (
        <AttachmentTray items={files} onCancel={attachments.cancel} onResume={attachments.resume} />
      )}
      {attachments && (
        <span class="visually-hidden" role="status">
          {files.length > 0 && !waiting
            ? `${files.length === 1 ? 'The file is' : `${files.length} files are`} ready to send.`
            : ''}
        </span>
      )}
      {choosingEmoji && (
        <div class="composer-emoji">
          <EmojiPicker
            label="Insert an emoji"
            onPick={insertEmoji}
            onClose={() => {
              setChoosingEmoji(false)
              field.current?.focus()
            }}
          />
        </div>
      )}
      <div class="composer-tools">
        {attachments && (
          <>
            <button
              type="button"
              class="secondary attach-button"
              aria-label="Attach files"
              title="Attach files"
              disabled={editing}
              onClick={() => picker.current?.click()}
            >
              📎
            </button>
            <input
              ref={picker}
              type="file"
              multiple
              hidden
              onChange={(event) => {
                const input = event.currentTarget
                attach(Array.from(input.files ?? []))
                input.value = ''
              }}
            />
          </>
        )}
        <button
          type="button"
          class="secondary emoji-button"
          aria-label="Insert emoji"
          aria-expanded={choosingEmoji}
          title="Insert emoji"
          onClick={() => setChoosingEmoji(!choosingEmoji)}
        >
          😊
        </button>
      </div>
      <label for="composer-text" class="visually-hidden">
        Message
      </label>
      <textarea
        id="composer-text"
        ref={field}
        name="message"
        rows={2}
        placeholder="Write a message"
        aria-invalid={length.over}
        aria-describedby={length.near ? 'composer-length' : undefined}
        value={text}
        onInput={(event) => {
          const value = event.currentTarget.value
          setText(value)
          if (!editing && value.trim() !== '') onTyping?.()
        }}
        onKeyDown={keyDown}
        onPaste={paste}
      />
      <button
        type="submit"
        disabled={!canSend}
        title={waiting ? 'Waiting for the files to upload' : length.over ? 'The message is too long' : undefined}
      >
        {editing ? 'Save' : 'Send'}
      </button>
      <LengthCounter id="composer-length" length={length} />
    </form>
  )
}
