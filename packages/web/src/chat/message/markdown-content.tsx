import { useEffect, useState } from 'preact/hooks'
import { loadedMarkdown, loadMarkdown, type MarkdownRenderer } from './markdown.ts'

/** The renderer, re-rendering the caller once it has loaded. */
export function useMarkdown(): MarkdownRenderer | undefined {
  const [renderer, setRenderer] = useState(loadedMarkdown)
  useEffect(() => {
    if (renderer) return
    let current = true
    loadMarkdown()
      .then((loaded) => current && setRenderer(() => loaded))
      .catch(() => {
        // A failed chunk load leaves the text unformatted; the next message shown tries again.
      })
    return () => {
      current = false
    }
  }, [renderer])
  return renderer
}

/**
 * A message's Markdown as safe HTML. The only HTML this client inserts is what the shared renderer
 * produced (raw HTML in the source is escaped there); until it has loaded, the source is shown as text.
 */
export function MarkdownContent({ source }: { source: string }) {
  const renderer = useMarkdown()
  if (!renderer) return <div class="message-content">{source}</div>
  // The only HTML inserted anywhere: renderMarkdown escapes raw HTML and allows only safe links.
  return <div class="message-content markdown" dangerouslySetInnerHTML={{ __html: renderer.renderMarkdown(source) }} />
}

/** A message's text without its Markdown markup (previews of replies and pins), always as text. */
export function PlainText({ source }: { source: string }) {
  const renderer = useMarkdown()
  return <>{renderer ? renderer.markdownToText(source) : source}</>
}
