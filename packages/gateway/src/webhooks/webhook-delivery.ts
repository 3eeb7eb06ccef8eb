import { createHmac } from 'node:crypto'
import { type OutboundClient, OutboundError } from '../outbound/outbound-request.ts'

/** Hex HMAC-SHA256 of the raw body, keyed with the app's webhook signing secret (spec: "Authentication" 8). */
export const SIGNATURE_HEADER = 'x-signature'
/** The delivery id: the same on every attempt of one delivery, so a receiver can drop repeats. */
export const DELIVERY_ID_HEADER = 'x-delivery-id'
/** Which attempt of the delivery this is, from 1. */
export const ATTEMPT_HEADER = 'x-delivery-attempt'

/** The X-Signature of a body: hex HMAC-SHA256 with the signing secret (its UTF-8 bytes) as the key. */
export function signWebhook(secret: string, body: Buffer): string {
  return createHmac('sha256', secret).update(body).digest('hex')
}

export interface DeliveryAttempt {
  /** The app's callback URL. */
  url: string
  /** The app's webhook signing secret. */
  secret: string
  deliveryId: number
  /** The stored payload, sent byte for byte as it was first built. */
  body: string
  attempt: number
}

/** What one attempt came to: `permanent` failures (a refused address) are not retried. */
export type AttemptResult =
  | { ok: true; status: number }
  | { ok: false; status: number; error: string; permanent: boolean }

/** POSTs one signed attempt of a delivery; a 2xx answer delivers it, anything else fails it. */
export async function attemptDelivery(
  client: OutboundClient,
  { url, secret, deliveryId, body, attempt }: DeliveryAttempt,
  signal?: AbortSignal,
): Promise<AttemptResult> {
  const bytes = Buffer.from(body, 'utf8')
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Atrium-Webhooks/1',
    [SIGNATURE_HEADER]: signWebhook(secret, bytes),
    [DELIVERY_ID_HEADER]: String(deliveryId),
    [ATTEMPT_HEADER]: String(attempt),
  }
  try {
    const answer = await client.post(url, headers, bytes, signal)
    if (answer.status >= 200 && answer.status < 300) return { ok: true, status: answer.status }
    const excerpt = answer.excerpt.replace(/\s+/g, ' ').trim()
    return {
      ok: false,
      status: answer.status,
      error: `the receiver answered ${answer.status}${excerpt ? `: ${excerpt}` : ''}`,
      permanent: false,
    }
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error
    return { ok: false, status: 0, error: error.message, permanent: error.failure === 'refused' }
  }
}
