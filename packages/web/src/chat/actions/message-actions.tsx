import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { MessageView } from '../../api/chat-types.ts'
import { EmojiPicker } from '../emoji/lazy-emoji-picker.ts'
import type { MessagePermissions } from '../message/names.ts'

/** The reactions offered in a message's actions; chips under a message toggle any emoji already used. */
export const QUICK_REACTIONS = ['👍', '❤️', '😂', '🎉', '😮', '😢'] as const

/** What the open conversation does for a message's actions and its reaction chips. */
export interface MessageActionHandlers {
  reply(message: MessageView): void
  edit(message: MessageView): void
  remove(message: MessageView): void
  togglePin(message: MessageView): void
  forward(message: MessageView): void
  react(message: MessageView, emoji: string): void
  /** Copies the message's link (message-link.ts), which opens the chat at it. */
  copyLink(message: MessageView): void
  /** Opens the actions of `messageId`, or closes them (undefined). */
  showActions(messageId: string | undefined): void
  /** Scrolls to a loaded message (a reply's original, a pinned one, a search result). */
  jumpTo(messageId: string): void
}

interface MessageActionsProps {
  message: MessageView
  permissions: MessagePermissions
  handlers: MessageActionHandlers
  /** Closes the actions and gives the focus back to the button that opened them. */
  onClose: () => void
}

/** The action buttons of one message; deleting asks once more. Escape closes them. */
export function MessageActions({ message, permissions, handlers, onClose }: MessageActionsProps) {
  const [confirming, setConfirming] = useState(false)
  const [picking, setPicking] = useState(false)
  const group = useRef<HTMLFieldSetElement>(null)

  // Before the next key: an Escape pressed at once must reach the group, not the toggle.
  useLayoutEffect(() => {
    if (!picking) group.current?.querySelector('button')?.focus()
  }, [confirming, picking])

  // Fetched while the actions are open, so "More reactions" opens the picker at once.
  useEffect(() => {
    if (permissions.react) void EmojiPicker.preload().catch(() => {})
  }, [permissions.react])

  function run(action: (message: MessageView) => void) {
    action(message)
    onClose()
  }

  if (picking)
    return (
      <EmojiPicker
        label="Add a reaction"
        onPick={(emoji) => run((target) => handlers.react(target, emoji))}
        onClose={() => setPicking(false)}
      />
    )

  return (
    <fieldset
      class="message-actions"
      ref={group}
      onKeyDown={(event) => {
        if (event.key === 'Escape') {
          event.stopPropagation()
          onClose()
        }
      }}
    >
      <legend class="visually-hidden">Message actions</legend>
      {confirming ? (
        <>
          <span class="confirm-text">Delete this message for everyone?</span>
          <button type="button" class="danger" onClick={() => run(handlers.remove)}>
            Delete
          </button>
          <button type="button" class="secondary" onClick={() => setConfirming(false)}>
            Keep
          </button>
        </>
      ) : (
        <>
          {permissions.react &&
            QUICK_REACTIONS.map((emoji) => (
              <button
                key={emoji}
                type="button"
                class="emoji"
                aria-label={`React with ${emoji}`}
                onClick={() => run((target) => handlers.react(target, emoji))}
              >
                {emoji}
              </button>
            ))}
          {permissions.react && (
            <button
              type="button"
              class="emoji more-reactions"
              aria-label="More reactions"
              onClick={() => setPicking(true)}
            >
              ＋
            </button>
          )}
          {permissions.reply && (
            <button type="button" class="secondary" onClick={() => run(handlers.reply)}>
              Reply
            </button>
          )}
          {permissions.edit && (
            <button type="button" class="secondary" onClick={() => run(handlers.edit)}>
              Edit
            </button>
          )}
          {permissions.pin && (
            <button type="button" class="secondary" onClick={() => run(handlers.togglePin)}>
              {message.pinned ? 'Unpin' : 'Pin'}
            </button>
          )}
          {permissions.forward && (
            <button type="button" class="secondary" onClick={() => run(handlers.forward)}>
              Forward
            </button>
          )}
          <button type="button" class="secondary" onClick={() => run(handlers.copyLink)}>
            Copy link
          </button>
          {permissions.delete && (
            <button type="button" class="danger" onClick={() => setConfirming(true)}>
              Delete
            </button>
          )}
        </>
      )}
    </fieldset>
  )
}
