import { randomBytes } from 'node:crypto'
import { notifyBatches } from '@atrium/platform'
import type { Presence } from './presence.ts'

/** The channel's name (gateway-links.ts). */
export const PRESENCE_CHANNEL = 'atrium_gateway_presence'

/** How often a process says it is alive; one not heard from for three periods counts as gone. */
export const ALIVE_MS = 10_000

/** What a gateway process tells the others about its streams; `p` names the sending process. */
export type PresenceMessage =
  /** A person's stream opened or closed on the sender. */
  | { p: string; open: number }
  | { p: string; close: number }
  /** The sender lives (sent every ALIVE_MS). */
  | { p: string; alive: true }
  /** The sender (re)joined the channel: what it said before may be stale, and it needs everyone's streams. */
  | { p: string; hello: true }
  /** The sender's open streams per person, in parts; the first part replaces what it said before. */
  | { p: string; state: [number, number][]; first: boolean }
  /** The sender stops. */
  | { p: string; bye: true }

interface Peer {
  heard: number
  streams: Map<number, number>
}

/**
 * Presence across gateway processes (docs/events.md, "Several gateway processes"): each process
 * tells the others when a person's stream opens and closes, and theirs count in `presence` as its
 * own would, until they say goodbye or are not heard from for three ALIVE_MS periods. A process
 * that (re)joins says hello; everyone answers with their open streams, and it sends its own, so a
 * message missed while a connection was down is made good at the reconnect. `send` carries a
 * message to every other process (and may bring the sender's own back: it is ignored).
 */
export function shareAcrossGateways(
  presence: Presence,
  send: (message: PresenceMessage) => Promise<void> | void,
  now: () => number = Date.now,
) {
  const self = randomBytes(8).toString('hex')
  const own = new Map<number, number>()
  const peers = new Map<string, Peer>()

  function add(streams: Map<number, number>, crmId: number, delta: number) {
    const count = (streams.get(crmId) ?? 0) + delta
    if (count < 0) return false
    if (count === 0) streams.delete(crmId)
    else streams.set(crmId, count)
    return true
  }

  function forget(key: string) {
    const peer = peers.get(key)
    if (!peer) return
    for (const [crmId, count] of peer.streams)
      for (let stream = 0; stream < count; stream++) presence.disconnected(crmId)
    peers.delete(key)
  }

  function peerOf(key: string): Peer {
    let peer = peers.get(key)
    if (!peer) {
      peer = { heard: now(), streams: new Map() }
      peers.set(key, peer)
    }
    peer.heard = now()
    return peer
  }

  function sendState() {
    for (const [index, part] of stateParts([...own]).entries()) send({ p: self, state: part, first: index === 0 })
  }

  return {
    presence: {
      connected(crmId: number) {
        presence.connected(crmId)
        add(own, crmId, 1)
        send({ p: self, open: crmId })
      },
      disconnected(crmId: number) {
        presence.disconnected(crmId)
        add(own, crmId, -1)
        send({ p: self, close: crmId })
      },
      online: presence.online,
    } satisfies Presence,

    /** A message from the channel. */
    receive(message: PresenceMessage) {
      if (message.p === self) return
      if ('bye' in message) return forget(message.p)
      if ('hello' in message) {
        forget(message.p)
        peerOf(message.p)
        return sendState()
      }
      if ('state' in message && message.first) forget(message.p)
      const peer = peerOf(message.p)
      if ('open' in message) {
        if (add(peer.streams, message.open, 1)) presence.connected(message.open)
      } else if ('close' in message) {
        if (add(peer.streams, message.close, -1)) presence.disconnected(message.close)
      } else if ('state' in message) {
        for (const [crmId, count] of message.state) {
          add(peer.streams, crmId, count)
          for (let stream = 0; stream < count; stream++) presence.connected(crmId)
        }
      }
    },

    /** The channel listens (at first and after a reconnect). */
    joined() {
      send({ p: self, hello: true })
      sendState()
    },

    /** Every ALIVE_MS: says this process lives, and forgets those not heard from for three periods. */
    beat() {
      send({ p: self, alive: true })
      for (const [key, peer] of peers) if (now() - peer.heard > 3 * ALIVE_MS) forget(key)
    },

    /** Says goodbye, so the others stop counting this process's streams at once. */
    leave: () => send({ p: self, bye: true }),
  }
}

/** Open streams per person as `state` parts, each within PostgreSQL's payload limit once sent; one (empty) when there are none. */
export function stateParts(entries: [number, number][]): [number, number][][] {
  // The rest of a state message: the process key (16 characters) and `first`.
  const parts = notifyBatches(entries, 100)
  return parts.length > 0 ? parts : [[]]
}

const isId = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0

/** A presence notification's payload as a message; undefined when it is not one. */
export function parsePresence(payload: string): PresenceMessage | undefined {
  let value: Record<string, unknown>
  try {
    value = JSON.parse(payload) as Record<string, unknown>
  } catch {
    return undefined
  }
  if (typeof value?.p !== 'string') return undefined
  const p = value.p
  if (isId(value.open)) return { p, open: value.open }
  if (isId(value.close)) return { p, close: value.close }
  if (value.alive === true) return { p, alive: true }
  if (value.hello === true) return { p, hello: true }
  if (value.bye === true) return { p, bye: true }
  if (typeof value.first === 'boolean' && Array.isArray(value.state)) {
    const state = value.state as unknown[]
    const valid = state.every((entry) => Array.isArray(entry) && entry.length === 2 && isId(entry[0]) && isId(entry[1]))
    if (valid) return { p, state: state as [number, number][], first: value.first }
  }
  return undefined
}
