import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { isLongMessage } from './long-message.ts'

/**
 * A message's content, folded to its first lines with "Show more" when it is long
 * (long-message.ts). Folding only clips what the eye sees: the whole text stays in the page for
 * screen readers, search in the page and copying.
 */
export function LongContent({ id, content, children }: { id: string; content: string; children: ComponentChildren }) {
  const [open, setOpen] = useState(false)
  if (!isLongMessage(content)) return <>{children}</>
  const region = `message-${id}-content`
  return (
    <>
      <div id={region} class={open ? 'long-message' : 'long-message folded'}>
        {children}
      </div>
      <button
        type="button"
        class="link-button show-more"
        aria-expanded={open}
        aria-controls={region}
        onClick={() => setOpen(!open)}
      >
        {open ? 'Show less' : 'Show more'}
      </button>
    </>
  )
}
