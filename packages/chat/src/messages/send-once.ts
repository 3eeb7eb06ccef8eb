import { isUniqueViolation, keyCutoff, requireSameRequest } from '@atrium/platform'
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
      // Keys past the retention are forgotten here, lazily; this also frees this one.
      await unit.sendKeys.pruneBefore(notBefore)
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
