import type { ComponentType, JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'

/** A component loaded from its own chunk on first use; `preload` starts loading it early. */
export interface LazyComponent<P> {
  (props: P): JSX.Element | null
  preload(): Promise<unknown>
}

/**
 * A component whose code loads from its own chunk when it first renders, so screens the first
 * render of the messenger does not need stay out of the start-up script (bench/web-render.ts).
 * Until the chunk is in, it renders nothing; a chunk that fails to load says so, and the next
 * render tries again.
 */
export function lazy<P extends object>(load: () => Promise<ComponentType<P>>): LazyComponent<P> {
  let loaded: ComponentType<P> | undefined
  let loading: Promise<ComponentType<P>> | undefined

  function start(): Promise<ComponentType<P>> {
    loading ??= load().then(
      (component) => {
        loaded = component
        return component
      },
      (failure: unknown) => {
        loading = undefined
        throw failure
      },
    )
    return loading
  }

  function Lazy(props: P): JSX.Element | null {
    const [, setReady] = useState(0)
    const [failed, setFailed] = useState(false)
    useEffect(() => {
      if (loaded) return
      let current = true
      start().then(
        () => current && setReady((count) => count + 1),
        () => current && setFailed(true),
      )
      return () => {
        current = false
      }
    }, [])
    if (loaded) {
      const Component = loaded
      return <Component {...props} />
    }
    if (failed)
      return (
        <p class="notice-line" role="alert">
          This part of the page could not be loaded. Check the connection, then reload the page.
        </p>
      )
    return null
  }
  Lazy.preload = start
  return Lazy
}
