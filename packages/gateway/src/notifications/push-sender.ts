import webPush from 'web-push'
import type { GatewayConfig } from '../config.ts'
import { type OutboundClient, OutboundError } from '../outbound/outbound-request.ts'
import type { PushSubscription } from './push-subscriptions.repository.ts'

/**
 * What became of one push: accepted (`sent`), the subscription no longer exists (`gone`: 404 or
 * 410, RFC 8030 §7.3), worth another try later (`retry`: no answer, 429, 5xx), or refused for good
 * (`failed`: 400, 401/403 for a subscription made with another VAPID key, 413, a refused address).
 */
export type PushOutcome =
  | { kind: 'sent' }
  | { kind: 'gone'; status: number }
  | { kind: 'retry'; error: string }
  | { kind: 'failed'; error: string }

export type SendPush = (subscription: PushSubscription, payload: string) => Promise<PushOutcome>

export interface PushSenderOptions {
  settings: GatewayConfig['WebPush']
  /** The client for user-chosen URLs: a push endpoint is chosen by the browser, so by the user. */
  outbound: OutboundClient
}

/**
 * Returns the function that sends one push. `web-push` builds the request (the RFC 8291 aes128gcm
 * payload encrypted to the browser's keys, the RFC 8292 VAPID JWT for the endpoint's origin); the
 * outbound client sends it, so an endpoint on a loopback or private address is refused like any
 * user-chosen URL (unless WebPush.AllowPrivateEndpoints).
 */
export function createPushSender({ settings, outbound }: PushSenderOptions): SendPush {
  const vapidDetails = { subject: settings.Subject, publicKey: settings.PublicKey, privateKey: settings.PrivateKey }

  return async function sendPush(subscription, payload) {
    let details: ReturnType<typeof webPush.generateRequestDetails>
    try {
      details = webPush.generateRequestDetails(
        { endpoint: subscription.endpoint, keys: { p256dh: subscription.p256dh, auth: subscription.auth } },
        payload,
        // Chat messages are what people wait for: high urgency wakes a dozing phone (RFC 8030 §5.3).
        { vapidDetails, TTL: settings.TtlSeconds, urgency: 'high', contentEncoding: 'aes128gcm' },
      )
    } catch (error) {
      return { kind: 'failed', error: `cannot encrypt for this subscription: ${(error as Error).message}` }
    }
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(details.headers)) {
      // The outbound client sets the length of the body it sends.
      if (name.toLowerCase() !== 'content-length') headers[name.toLowerCase()] = String(value)
    }
    try {
      const { status, excerpt } = await outbound.post(details.endpoint, headers, details.body ?? Buffer.alloc(0))
      if (status >= 200 && status < 300) return { kind: 'sent' }
      if (status === 404 || status === 410) return { kind: 'gone', status }
      const error = `the push service answered ${status}: ${excerpt.slice(0, 200)}`
      return status === 429 || status >= 500 ? { kind: 'retry', error } : { kind: 'failed', error }
    } catch (error) {
      const message = (error as Error).message
      if (error instanceof OutboundError && error.failure === 'refused') return { kind: 'failed', error: message }
      return { kind: 'retry', error: message }
    }
  }
}
