import type { BroadcastEvent } from '../../live-events.ts'

export type BusListener = (event: BroadcastEvent | 'resync') => void

/** Hands the messenger's live events to the parts of the screen that follow them (the open conversation). */
export function createEventBus() {
  const listeners = new Set<BusListener>()
  return {
    publish(event: BroadcastEvent | 'resync') {
      for (const listener of listeners) listener(event)
    },
    /** Adds a listener; returns the function that removes it. */
    subscribe(listener: BusListener): () => void {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}

export type EventBus = ReturnType<typeof createEventBus>
