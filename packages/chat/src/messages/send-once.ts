import { isUniqueViolation, keyCutoff, requireSameRequest } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { Store, Unit } from '../store.ts'

export interface SendOnceOptions {
  /** The sender's member id: keys are the sender's own. */
  member: number
  /** The request's Idempotency-Key (not empty). */
  key: string
  /** What the send asked for (platform fingerprintOf): a repeat must ask for the same. */
  fingerprint: string
  /** How long a key is honoured, in hours. */
  retentionHours: number
  now: number
}

/** Keys past the retention are deleted at most this often, outside every send's transaction. */
const PRUNE_EVERY_MS = 60_000

/**
 * Returns the function that forgets the keys past `retentionHours`, called after keyed sends: it
 * deletes at most once a minute, in the background, so sends never wait for it or lock each other.
 */
export function createSendKeyPruning(store: Store, retentionHours: number, log: FastifyBaseLogger) {
  let last = 0
  return function pruneSendKeys(now: number): void {
    if (now - last < PRUNE_EVERY_MS) return
    last = now
    store.sendKeys
      .pruneBefore(keyCutoff(now, retentionHours))
      .catch((error) => log.warn({ err: error }, 'send_message keys: could not delete the expired ones'))
  }
}

/** What a send answers: the message view, whose `id` is the message's timetick. */
export type SentMessage = { id: string } & Record<string, unknown>

/**
 * Posts a message at most once per sender and Idempotency-Key (docs/chat-api.md, "Sending once").
 * The key is looked up and stored in the post's own transaction; the (member, key) primary key is
 * the last word, so a parallel request that got past the lookup fails its insert, its post rolls
 * back with it (message and event), and it answers the winner's message. A refused send stores no
 * key, so the same key may be used again once the cause is gone.
 */
export async function sendOnce<View extends SentMessage>(
  store: Store,
  { member, key, fingerprint, retentionHours, now }: SendOnceOptions,
  post: (unit: Unit) => Promise<View>,
): Promise<{ message: View; replayed: boolean }> {
  const notBefore = keyCutoff(now, retentionHours)
  function replay(stored: { fingerprint: string; response: string }) {
    requireSameRequest(stored.fingerprint, fingerprint, key)
    return { message: JSON.parse(stored.response) as View, replayed: true }
  }
  try {
    return await store.transact(async (unit) => {
      const stored = await unit.sendKeys.find(member, key, notBefore)
      if (stored) return replay(stored)
      // This sender's key past the retention is forgotten, so the key is free again.
      await unit.sendKeys.forgetExpired(member, key, notBefore)
      const message = await post(unit)
      await unit.sendKeys.insert({
        member,
        idem_key: key,
        fingerprint,
        message_id: Number(message.id),
        response: JSON.stringify(message),
        created: now,
      })
      return { message, replayed: false }
    })
  } catch (error) {
    if (!isUniqueViolation(error)) throw error
    const stored = await store.sendKeys.find(member, key, notBefore)
    if (!stored) throw error
    return replay(stored)
  }
}
