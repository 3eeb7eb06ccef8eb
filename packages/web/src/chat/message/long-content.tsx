import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { isLongMessage } from './long-message.ts'

interface LongContentProps {
  id: string
  content: string
  /** Set while the conversation jumps to this message (its jump's number): it shows unfolded. */
  jump?: number
  children: ComponentChildren
}

/**
 * A message's content, folded to its first lines with "Show more" when it is long
 * (long-message.ts), and unfolded when the conversation jumps to it (a search result, a reply's
 * quote, the pinned bar). Folding only clips what the eye sees: the whole text stays in the page
 * for screen readers, find-in-page and copying.
 */
export function LongContent({ id, content, jump, children }: LongContentProps) {
  const [open, setOpen] = useState(false)
  // "Show less" after a jump folds it until the next jump.
  const [foldedAtJump, setFoldedAtJump] = useState<number | undefined>()
  if (!isLongMessage(content)) return <>{children}</>
  const shown = open || (jump !== undefined && jump !== foldedAtJump)
  const region = `message-${id}-content`
  const toggle = () => {
    setOpen(!shown)
    if (shown) setFoldedAtJump(jump)
  }
  return (
    <>
      <div id={region} class={shown ? 'long-message' : 'long-message folded'}>
        {children}
      </div>
      <button type="button" class="link-button show-more" aria-expanded={shown} aria-controls={region} onClick={toggle}>
        {shown ? 'Show less' : 'Show more'}
      </button>
    </>
  )
}
