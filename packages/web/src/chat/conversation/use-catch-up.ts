import { useCallback, useRef } from 'preact/hooks'

/**
 * A conversation's catch-up with what is newer than it holds, one at a time: asked for while one
 * runs, it runs once more afterwards; asked for before the conversation is `ready` (its first
 * page not in yet), it is only remembered, and `resumeAsked` runs it once the page is in.
 * `work`, `ready` and `onError` are read at each call, so the returned functions never change.
 */
export function useCatchUp(work: () => Promise<void>, ready: () => boolean, onError: (failure: unknown) => void) {
  const flags = useRef({ running: false, again: false })
  const current = useRef({ work, ready, onError })
  current.current = { work, ready, onError }

  const catchUp = useCallback(async () => {
    const state = flags.current
    if (state.running || !current.current.ready()) {
      state.again = true
      return
    }
    state.running = true
    try {
      do {
        state.again = false
        await current.current.work()
      } while (state.again)
    } catch (failure) {
      current.current.onError(failure)
    } finally {
      state.running = false
    }
  }, [])

  const resumeAsked = useCallback(() => {
    if (flags.current.again) void catchUp()
  }, [catchUp])

  return { catchUp, resumeAsked }
}
