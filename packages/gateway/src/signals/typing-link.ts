import { NOTIFY_PAYLOAD_MAX, openNotifyChannel } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { EventHub } from '../events/event-hub.ts'
import { toChunk } from '../events/sse-chunks.ts'

/** A typing frame for the streams of these members, wherever they are connected. */
export interface TypingFrame {
  members: number[]
  chunk: string
}

/** Carries typing frames to every other gateway process on the same PostgreSQL database. */
export interface TypingLink {
  publish(frame: TypingFrame): void
  listening(): Promise<void>
  close(): Promise<void>
}

/** The channel's name; the database URL's schema is added to it (platform `openNotifyChannel`). */
export const TYPING_CHANNEL = 'atrium_gateway_typing'

/**
 * Typing between gateway nodes that share a PostgreSQL gateway database (docs/events.md, "Several
 * gateway processes"): each process listens on one channel with a connection of its own, and a
 * typing signal is sent there once; every other process, of this node or another, writes it to the
 * streams it holds (`hub.signal`). Nothing is stored. A frame for a chat with many members goes as several
 * notifications, each within PostgreSQL's payload limit; a malformed one is logged and dropped.
 */
export function openTypingLink(url: string, log: FastifyBaseLogger, hub: Pick<EventHub, 'signal'>): TypingLink {
  const channel = openNotifyChannel({
    url,
    name: TYPING_CHANNEL,
    onMessage(payload) {
      const frame = parseFrame(payload)
      if (frame) hub.signal(frame.members, toChunk(frame.chunk))
      else log.warn({ payload: payload.slice(0, 200) }, 'malformed typing notification dropped')
    },
    onError: (error) => log.warn({ err: error }, 'typing link to the other gateways lost; reconnecting'),
  })
  return {
    publish(frame) {
      for (const payload of payloads(frame)) void channel.publish(payload)
    },
    listening: () => channel.listening(),
    close: () => channel.close(),
  }
}

/** The frame as notification payloads of at most NOTIFY_PAYLOAD_MAX bytes, the members split between them. */
export function payloads({ members, chunk }: TypingFrame): string[] {
  const room = NOTIFY_PAYLOAD_MAX - Buffer.byteLength(JSON.stringify({ members: [], chunk }))
  const out: string[] = []
  let batch: number[] = []
  let used = 0
  for (const member of members) {
    const size = String(member).length + 1
    if (batch.length > 0 && used + size > room) {
      out.push(JSON.stringify({ members: batch, chunk }))
      batch = []
      used = 0
    }
    batch.push(member)
    used += size
  }
  if (batch.length > 0) out.push(JSON.stringify({ members: batch, chunk }))
  return out
}

function parseFrame(payload: string): TypingFrame | undefined {
  try {
    const value = JSON.parse(payload) as Partial<TypingFrame>
    if (
      typeof value.chunk === 'string' &&
      Array.isArray(value.members) &&
      value.members.every((member) => Number.isSafeInteger(member) && member > 0)
    ) {
      return { members: value.members, chunk: value.chunk }
    }
  } catch {}
  return undefined
}
