import { openNotifyChannel } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { EventHub } from '../events/event-hub.ts'
import { createUsageLink, USAGE_CHANNEL } from '../rate-limit/usage-share.ts'
import type { Presence } from './presence.ts'
import { ALIVE_MS, PRESENCE_CHANNEL, parsePresence, shareAcrossGateways } from './presence-link.ts'
import { createTypingLink, TYPING_CHANNEL, type TypingLink } from './typing-link.ts'

type LinkName = typeof TYPING_CHANNEL | typeof PRESENCE_CHANNEL | typeof USAGE_CHANNEL

/**
 * Limit usage, typing and presence between every gateway process on one PostgreSQL gateway
 * database, other nodes' included (docs/events.md, "Several gateway processes", and
 * docs/operations.md): one connection of this process, listening on a channel for each, beside
 * the database pool. Opened before the request checks, which count usage from the start;
 * `signals` joins the event hub once it exists. `close` says goodbye to the others.
 */
export function linkGateways(url: string, log: FastifyBaseLogger) {
  const receivers = new Map<LinkName, (payload: string) => void>()
  let listening = false
  let joined = () => {}
  const channel = openNotifyChannel<LinkName>({
    url,
    names: [TYPING_CHANNEL, PRESENCE_CHANNEL, USAGE_CHANNEL],
    onMessage: (name, payload) => receivers.get(name)?.(payload),
    onError: (error) => log.warn({ err: error }, 'link to the other gateways lost; reconnecting'),
    onListening() {
      listening = true
      joined()
    },
  })
  const dropped = (kind: string) => (payload: string) =>
    log.warn({ payload: payload.slice(0, 200) }, `malformed ${kind} notification dropped`)
  const usage = createUsageLink((payload) => void channel.publish(USAGE_CHANNEL, payload), dropped('usage'))
  receivers.set(USAGE_CHANNEL, usage.receive)
  let stop = async () => {}

  return {
    /** Limit usage: the caller limits' share (rate-limit/rate-limits.ts). */
    usage: usage.share,

    /** Typing and presence for this process's streams, shared with the other processes from now on. */
    signals(hub: Pick<EventHub, 'signal'>, presence: Presence): { typing: TypingLink; presence: Presence } {
      const typing = createTypingLink((payload) => void channel.publish(TYPING_CHANNEL, payload), hub, log)
      const sharing = shareAcrossGateways(presence, (message) =>
        channel.publish(PRESENCE_CHANNEL, JSON.stringify(message)),
      )
      receivers.set(TYPING_CHANNEL, typing.receive)
      receivers.set(PRESENCE_CHANNEL, (payload) => {
        const message = parsePresence(payload)
        if (message) sharing.receive(message)
        else dropped('presence')(payload)
      })
      joined = () => sharing.joined()
      if (listening) joined()
      const timer = setInterval(() => sharing.beat(), ALIVE_MS)
      timer.unref()
      stop = async () => {
        clearInterval(timer)
        await sharing.leave()
      }
      return { typing, presence: sharing.presence }
    },

    listening: () => channel.listening(),
    async close() {
      await stop()
      await channel.close()
    },
  }
}
