import type { NodeMessages } from '../server/node-messages.ts'

/** How long a person counts as online after their last stream closed, so a reload does not flicker. */
export const PRESENCE_GRACE_MS = 15_000

/**
 * Who has a live SSE stream on this gateway node: a count of open streams per CRM id, and when the
 * last one closed, so that a person stays online for PRESENCE_GRACE_MS after it (a reload, a
 * reconnect). Memory only: nothing is written anywhere. With several workers each tells the others
 * of its streams opening and closing (`shareWithWorkers`), so every worker knows the node's streams;
 * on a PostgreSQL gateway database every gateway process, of any node, tells every other one
 * instead (presence-link.ts).
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

/**
 * Makes a worker's presence the node's: its own streams are told to the other workers, and theirs
 * count here as this worker's would, until their worker stops (the primary's `gone`).
 */
export function shareWithWorkers(presence: Presence, node: NodeMessages): Presence {
  if (!node.shared) return presence
  // Per other worker: their open streams per person, so a stopped worker's can be dropped whole.
  const remote = new Map<number, Map<number, number>>()
  node.on('presence', ({ from, crmId, open }) => {
    const streams = remote.get(from) ?? new Map<number, number>()
    remote.set(from, streams)
    const count = (streams.get(crmId) ?? 0) + (open ? 1 : -1)
    if (count > 0) streams.set(crmId, count)
    else streams.delete(crmId)
    if (open) presence.connected(crmId)
    else presence.disconnected(crmId)
  })
  node.on('gone', ({ from }) => {
    for (const [crmId, count] of remote.get(from) ?? []) {
      for (let stream = 0; stream < count; stream++) presence.disconnected(crmId)
    }
    remote.delete(from)
  })
  return {
    connected(crmId) {
      presence.connected(crmId)
      node.publish({ kind: 'presence', crmId, open: true })
    },
    disconnected(crmId) {
      presence.disconnected(crmId)
      node.publish({ kind: 'presence', crmId, open: false })
    },
    online: presence.online,
  }
}
