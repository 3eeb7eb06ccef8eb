import { notifyBatches } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { EventHub } from '../events/event-hub.ts'
import { toChunk } from '../events/sse-chunks.ts'

/** A typing frame for the streams of these members, wherever they are connected. */
export interface TypingFrame {
  members: number[]
  chunk: string
}

/** The channel's name (gateway-links.ts). */
export const TYPING_CHANNEL = 'atrium_gateway_typing'

/**
 * Typing between gateway processes that share a PostgreSQL gateway database (docs/events.md,
 * "Several gateway processes"): a typing signal is sent on the channel once (`publish`), and every
 * other process, of this node or another, writes what it receives to the streams it holds
 * (`receive`, through `hub.signal`). Nothing is stored. A frame for a chat with many members goes
 * as several notifications, each within PostgreSQL's payload limit; a malformed one is logged and
 * dropped.
 */
export function createTypingLink(
  send: (payload: string) => void,
  hub: Pick<EventHub, 'signal'>,
  log: FastifyBaseLogger,
) {
  return {
    publish(frame: TypingFrame): void {
      for (const payload of payloads(frame)) send(payload)
    },
    receive(payload: string): void {
      const frame = parseFrame(payload)
      if (frame) hub.signal(frame.members, toChunk(frame.chunk))
      else log.warn({ payload: payload.slice(0, 200) }, 'malformed typing notification dropped')
    },
  }
}

export type TypingLink = ReturnType<typeof createTypingLink>

/** The frame as notification payloads of at most NOTIFY_PAYLOAD_MAX bytes, the members split between them. */
export function payloads({ members, chunk }: TypingFrame): string[] {
  const overhead = Buffer.byteLength(JSON.stringify({ members: [], chunk })) - 2
  return notifyBatches(members, overhead).map((batch) => JSON.stringify({ members: batch, chunk }))
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
