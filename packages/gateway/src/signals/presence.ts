/** How long a person counts as online after their last stream closed, so a reload does not flicker. */
export const PRESENCE_GRACE_MS = 15_000

/**
 * Who has a live SSE stream on this gateway: a count of open streams per CRM id, and when the
 * last one closed, so that a person stays online for PRESENCE_GRACE_MS after it (a reload, a
 * reconnect). Memory only: nothing is written anywhere, and it knows only this gateway's streams.
 */
export function createPresence({ graceMs = PRESENCE_GRACE_MS, now = Date.now } = {}) {
  const streams = new Map<number, number>()
  const left = new Map<number, number>()

  return {
    /** A stream of this person opened. */
    connected(crmId: number): void {
      streams.set(crmId, (streams.get(crmId) ?? 0) + 1)
      left.delete(crmId)
    },

    /** A stream of this person closed. */
    disconnected(crmId: number): void {
      const open = (streams.get(crmId) ?? 0) - 1
      if (open > 0) return void streams.set(crmId, open)
      streams.delete(crmId)
      left.set(crmId, now())
      // Entries past the grace say nothing more: drop them now and then, so the map stays small.
      if (left.size > 1000) {
        for (const [id, at] of left) if (now() - at > graceMs) left.delete(id)
      }
    },

    /** Whether the person has a stream open now, or closed their last one within the grace period. */
    online(crmId: number): boolean {
      if (streams.has(crmId)) return true
      const at = left.get(crmId)
      return at !== undefined && now() - at <= graceMs
    },
  }
}

export type Presence = ReturnType<typeof createPresence>
