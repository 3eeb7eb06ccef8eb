import { openNotifyChannel } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { EventHub } from '../events/event-hub.ts'
import type { Presence } from './presence.ts'
import { ALIVE_MS, PRESENCE_CHANNEL, parsePresence, shareAcrossGateways } from './presence-link.ts'
import { createTypingLink, TYPING_CHANNEL } from './typing-link.ts'

/**
 * Typing and presence between every gateway process on one PostgreSQL gateway database, other
 * nodes' included (docs/events.md, "Several gateway processes"): one connection of this process,
 * listening on a channel for each, beside the database pool. `close` says goodbye to the others.
 */
export function linkGateways(url: string, log: FastifyBaseLogger, hub: Pick<EventHub, 'signal'>, presence: Presence) {
  const channel = openNotifyChannel({
    url,
    names: [TYPING_CHANNEL, PRESENCE_CHANNEL],
    onMessage(name, payload) {
      if (name === TYPING_CHANNEL) return typing.receive(payload)
      const message = parsePresence(payload)
      if (message) sharing.receive(message)
      else log.warn({ payload: payload.slice(0, 200) }, 'malformed presence notification dropped')
    },
    onError: (error) => log.warn({ err: error }, 'link to the other gateways lost; reconnecting'),
    onListening: () => sharing.joined(),
  })
  const typing = createTypingLink((payload) => void channel.publish(TYPING_CHANNEL, payload), hub, log)
  const sharing = shareAcrossGateways(presence, (message) => channel.publish(PRESENCE_CHANNEL, JSON.stringify(message)))
  const timer = setInterval(() => sharing.beat(), ALIVE_MS)
  timer.unref()
  return {
    typing,
    presence: sharing.presence,
    listening: () => channel.listening(),
    async close() {
      clearInterval(timer)
      await sharing.leave()
      await channel.close()
    },
  }
}
