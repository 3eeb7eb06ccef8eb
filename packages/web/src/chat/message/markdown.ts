/** The shared renderer of `@atrium/platform/markdown`: links, code, lists and quotes, raw HTML and images blocked. */
export type MarkdownRenderer = typeof import('@atrium/platform/markdown')

let loaded: MarkdownRenderer | undefined
let loading: Promise<MarkdownRenderer> | undefined

/**
 * Loads the renderer once. It is imported on demand, so markdown-it stays out of the JavaScript the
 * client needs for its first render (issue 6: 60 KB gzip).
 */
export function loadMarkdown(): Promise<MarkdownRenderer> {
  loading ??= import('@atrium/platform/markdown').then(
    (renderer) => {
      loaded = renderer
      return renderer
    },
    (failure: unknown) => {
      loading = undefined
      throw failure
    },
  )
  return loading
}

/** The renderer when it has been loaded, else undefined (show the source as text meanwhile). */
export function loadedMarkdown(): MarkdownRenderer | undefined {
  return loaded
}
