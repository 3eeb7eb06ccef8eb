import type { AuthApi } from '../api/auth-api.ts'

/** The gateway's root service worker (spec: "Web Push rules"): it shows pushes and opens their links. */
export const SERVICE_WORKER_URL = '/sw.js'

/**
 * Where this browser stands with notifications: `unsupported` (no service workers or Push API, as
 * in a private window of some browsers), `blocked` (the person said no; only the browser's site
 * settings can undo it), `off` or `on` (a push subscription exists, made with the gateway's key).
 */
export type PushState = 'unsupported' | 'blocked' | 'off' | 'on'

function supported(): boolean {
  return 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window
}

/** The push subscription of the root worker, if the worker is registered and subscribed. */
async function currentSubscription(): Promise<PushSubscription | null> {
  const registration = await navigator.serviceWorker.getRegistration('/')
  return (await registration?.pushManager.getSubscription()) ?? null
}

/** This browser's notification state now. */
export async function readPushState(): Promise<PushState> {
  if (!supported()) return 'unsupported'
  if (Notification.permission === 'denied') return 'blocked'
  if (Notification.permission !== 'granted') return 'off'
  return (await currentSubscription()) ? 'on' : 'off'
}

/**
 * At each signed-in start where notifications are allowed: registers /sw.js again (a browser that
 * subscribed earlier picks up a newer worker at once) and hands an existing subscription to the
 * gateway again, which moves it to whoever is signed in now (docs/events.md, "The browser side").
 * Never asks for permission and never subscribes anew.
 */
export async function renewPush(auth: AuthApi): Promise<void> {
  if (!supported() || Notification.permission !== 'granted') return
  const registration = await navigator.serviceWorker.register(SERVICE_WORKER_URL, { scope: '/' })
  const subscription = await registration.pushManager.getSubscription()
  if (subscription) await auth.subscribePush(subscription.toJSON())
}

/** Why turning notifications on did not finish. */
export class PushSetupError extends Error {
  readonly reason: 'blocked' | 'dismissed' | 'unsupported' | 'subscribe'
  constructor(reason: PushSetupError['reason'], message: string) {
    super(message)
    this.name = 'PushSetupError'
    this.reason = reason
  }
}

/**
 * Turns notifications on, only ever from a person's click: asks the browser for permission, then
 * registers /sw.js, subscribes with the gateway's VAPID key (`publicKey`, base64url) and stores the
 * subscription at the gateway. A gateway failure rejects with its RequestError.
 */
export async function turnOnPush(auth: AuthApi, publicKey: string): Promise<void> {
  if (!supported()) throw new PushSetupError('unsupported', 'This browser cannot show notifications from websites.')
  const permission = await Notification.requestPermission()
  if (permission === 'denied')
    throw new PushSetupError('blocked', 'Notifications are blocked for this site in the browser’s settings.')
  if (permission !== 'granted') throw new PushSetupError('dismissed', 'Notifications were not allowed.')
  const registration = await navigator.serviceWorker.register(SERVICE_WORKER_URL, { scope: '/' })
  await navigator.serviceWorker.ready
  let subscription = await registration.pushManager.getSubscription()
  // A subscription made with another key (the server's key changed) would be refused by the push service.
  if (subscription && !sameKey(subscription.options.applicationServerKey, publicKey)) {
    await subscription.unsubscribe()
    subscription = null
  }
  try {
    subscription ??= await registration.pushManager.subscribe({
      userVisibleOnly: true,
      applicationServerKey: fromBase64Url(publicKey),
    })
  } catch (error) {
    throw new PushSetupError('subscribe', `The browser’s push service did not answer: ${(error as Error).message}`)
  }
  await auth.subscribePush(subscription.toJSON())
}

/**
 * Turns notifications off: the gateway forgets this browser, and the browser drops its
 * subscription. Also done at sign-out, so that the next person on this browser is not sent the
 * previous one's messages and chooses for themselves.
 */
export async function turnOffPush(auth: AuthApi): Promise<void> {
  if (!supported()) return
  const subscription = await currentSubscription()
  if (!subscription) return
  await auth.unsubscribePush(subscription.endpoint)
  await subscription.unsubscribe()
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/')
  const binary = atob(base64.padEnd(base64.length + ((4 - (base64.length % 4)) % 4), '='))
  return Uint8Array.from(binary, (character) => character.charCodeAt(0))
}

function sameKey(key: ArrayBuffer | null, publicKey: string): boolean {
  if (!key) return false
  const expected = fromBase64Url(publicKey)
  const actual = new Uint8Array(key)
  return actual.length === expected.length && actual.every((byte, index) => byte === expected[index])
}
