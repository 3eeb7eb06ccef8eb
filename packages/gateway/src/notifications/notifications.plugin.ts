import { createPublicKey } from 'node:crypto'
import { ApiError, type Service } from '@atrium/platform'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { requireUserSession } from '../auth/caller.ts'
import type { GatewayConfig } from '../config.ts'
import { refusedHost } from '../outbound/outbound-address.ts'
import type { PushDispatcher } from './push-dispatcher.ts'
import { testPushMessage } from './push-messages.ts'
import type { PushSubscriptions } from './push-subscriptions.repository.ts'

export interface NotificationsPluginOptions {
  settings: GatewayConfig['WebPush']
  subscriptions: PushSubscriptions
  /** The push dispatcher; absent on a node without PushSending (or with Web Push off). */
  dispatcher: PushDispatcher | undefined
  nextTick: () => number
}

const Base64Url = (description: string) => Type.String({ pattern: '^[A-Za-z0-9_-]+$', maxLength: 200, description })
const Endpoint = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'The push service URL of the browser (PushSubscription.endpoint).',
})

const publicKeySchema = {
  summary: 'The VAPID public key for PushManager.subscribe',
  description: 'Pass it as `applicationServerKey` (base64url, decoded to bytes). See docs/events.md, "Web Push".',
  response: {
    200: Type.Object({ publicKey: Type.String({ description: 'VAPID public key, base64url (65 bytes).' }) }),
  },
}

const subscribeSchema = {
  summary: 'Register this browser’s push subscription',
  description:
    'The body is `PushSubscription.toJSON()`. An endpoint belongs to one user: subscribing it again moves it to the caller. ' +
    'Each user keeps at most WebPush.MaxSubscriptionsPerUser browsers; the oldest goes first.',
  body: Type.Object(
    {
      endpoint: Endpoint,
      expirationTime: Type.Optional(
        Type.Union([Type.Null(), Type.Number()], { description: 'As the browser gives it; not used.' }),
      ),
      keys: Type.Object(
        {
          p256dh: Base64Url('The browser’s P-256 public key (65 bytes).'),
          auth: Base64Url('The browser’s authentication secret (16 bytes).'),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      subscription: Type.Object({ id: Type.String(), endpoint: Type.String(), created: Type.Integer() }),
    }),
  },
}

const unsubscribeSchema = {
  summary: 'Remove a push subscription',
  description: 'Removes the caller’s subscription with this endpoint; `removed` is false when there was none.',
  body: Type.Object({ endpoint: Endpoint }, { additionalProperties: false }),
  response: { 200: Type.Object({ removed: Type.Boolean() }) },
}

const testSchema = {
  summary: 'Send a test push to each of the caller’s browsers',
  description:
    'Proves the sender transport only (VAPID, encryption, the push service), not the event pipeline. One try per ' +
    'browser; browsers the push service reports gone are removed. Answered by the node with PushSending only.',
  body: Type.Object({}, { additionalProperties: false }),
  response: {
    200: Type.Object({
      sent: Type.Integer({ description: 'Browsers whose push service accepted the push.' }),
      removed: Type.Integer({ description: 'Subscriptions the push service reported gone, now removed.' }),
      failed: Type.Integer({ description: 'Browsers the push did not reach (see the server log).' }),
    }),
  },
}

// Push subscriptions belong to a browser with a signed-in user, not to keys or app tokens.
const sessionUser = (request: FastifyRequest) =>
  requireUserSession(request.caller, 'Push notifications are managed from a signed-in browser session.')

/** Why a subscription cannot be used, or undefined. The send-time check of the address is the outbound client's. */
function subscriptionProblem(
  endpoint: string,
  p256dh: string,
  auth: string,
  allowPrivate: boolean,
): string | undefined {
  const url = URL.parse(endpoint)
  if (!url || (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:'))) {
    return 'endpoint must be an https URL'
  }
  if (url.username || url.password) return 'endpoint must not carry credentials'
  // The outbound guard's own judgement of the name, so every spelling of an internal host is refused.
  if (!allowPrivate && refusedHost(url.hostname) !== undefined) return 'endpoint must be on a public host'
  const key = Buffer.from(p256dh, 'base64url')
  if (key.length !== 65 || key[0] !== 4) return 'keys.p256dh must be an uncompressed P-256 public key (65 bytes)'
  try {
    const [x, y] = [key.subarray(1, 33).toString('base64url'), key.subarray(33).toString('base64url')]
    createPublicKey({ key: { kty: 'EC', crv: 'P-256', x, y }, format: 'jwk' })
  } catch {
    return 'keys.p256dh is not a point on P-256'
  }
  if (Buffer.from(auth, 'base64url').length !== 16) return 'keys.auth must be 16 bytes'
  return undefined
}

/**
 * The Web Push subscription lifecycle under /auth/v1/notifications/ (spec: "Web Push rules" 1).
 * Every operation needs a signed-in browser session; the state-changing ones are POSTs, so the
 * CSRF check (auth/csrf.ts) applies to them. Unsubscribing works even with Web Push turned off,
 * so a browser can always clean up.
 */
export default async function notificationsPlugin(
  app: Service,
  { settings, subscriptions, dispatcher, nextTick }: NotificationsPluginOptions,
) {
  function requireEnabled() {
    if (!settings.Enabled) throw new ApiError('PushDisabled')
  }

  app.get('/notifications/public_key', { schema: publicKeySchema }, async (request) => {
    sessionUser(request)
    requireEnabled()
    return { publicKey: settings.PublicKey }
  })

  app.post('/notifications/subscribe', { schema: subscribeSchema }, async (request) => {
    const caller = sessionUser(request)
    requireEnabled()
    const { endpoint, keys } = request.body
    const problem = subscriptionProblem(endpoint, keys.p256dh, keys.auth, settings.AllowPrivateEndpoints)
    if (problem) throw new ApiError('InvalidPushSubscription', problem)
    const { subscription, previousOwner } = await subscriptions.save(
      {
        crmId: caller.crmId,
        endpoint,
        p256dh: keys.p256dh,
        auth: keys.auth,
        userAgent: request.headers['user-agent'] ?? '',
      },
      settings.MaxSubscriptionsPerUser,
    )
    // On the sending node the user's events are pushed from the moment this answers.
    await dispatcher?.watch(caller.crmId)
    if (previousOwner !== 0 && previousOwner !== caller.crmId) await dispatcher?.forgetIfUnsubscribed(previousOwner)
    request.log.info({ subscription: subscription.id }, 'push subscription saved')
    return {
      subscription: { id: String(subscription.id), endpoint: subscription.endpoint, created: subscription.created },
    }
  })

  app.post('/notifications/unsubscribe', { schema: unsubscribeSchema }, async (request) => {
    const caller = sessionUser(request)
    const removed = await subscriptions.remove(caller.crmId, request.body.endpoint)
    if (removed) await dispatcher?.forgetIfUnsubscribed(caller.crmId)
    return { removed }
  })

  app.post('/notifications/test', { schema: testSchema }, async (request) => {
    const caller = sessionUser(request)
    requireEnabled()
    if (!dispatcher) throw new ApiError('PushSendingDisabled')
    if (!(await subscriptions.has(caller.crmId))) throw new ApiError('NoPushSubscription')
    return dispatcher.sendNow(caller.crmId, testPushMessage(nextTick()))
  })
}
