import assert from 'node:assert/strict'
import { test } from 'node:test'
import { until } from '@atrium/platform/testing'
import type { Page } from 'playwright-core'
import { type BrowserSubscription, startPushService, webPushSettings } from '../../../gateway/test/push-service.ts'
import { checkAccessibility } from './accessibility.ts'
import { openPrivateChat, send, signedInPerson } from './steps.ts'
import { launchBrowser, startSystem } from './system.ts'

/**
 * Chromium cannot make a real push subscription here. In Playwright's contexts (off the record)
 * `pushManager.subscribe()` fails at once with "Registration failed - permission denied", even
 * with the permission granted; in a persistent profile it waits on Google's push service (FCM),
 * out of reach of these machines, and never settles. So the page's PushManager hands out a subscription at the test's own push service (on
 * loopback, with real keys it decrypts with), recording the options the client passed. Everything
 * else is real: the permission flow, /sw.js registered by the client, the gateway storing the
 * subscription, the push for a chat message, and the worker showing it.
 */
function pushManagerStandIn(subscription: BrowserSubscription) {
  const calls = { subscribe: [] as { userVisibleOnly: boolean; key: string }[], permissionPrompts: 0 }
  const keyOf = (options?: PushSubscriptionOptionsInit) =>
    btoa(String.fromCharCode(...new Uint8Array(options?.applicationServerKey as ArrayBuffer)))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '')
  const script = ({ subscription, keyOfSource }: { subscription: BrowserSubscription; keyOfSource: string }) => {
    const keyOf = new Function(`return ${keyOfSource}`)() as (options?: PushSubscriptionOptionsInit) => string
    const state = window as unknown as { pushCalls: typeof calls; pushCurrent: PushSubscription | null }
    state.pushCalls = { subscribe: [], permissionPrompts: 0 }
    state.pushCurrent = null
    // Like a browser's, the subscription outlives the page: a reload finds it again.
    const made = (applicationServerKey: PushSubscriptionOptionsInit['applicationServerKey']) => {
      localStorage.setItem('push-stand-in', 'subscribed')
      state.pushCurrent = {
        endpoint: subscription.endpoint,
        expirationTime: null,
        options: { applicationServerKey, userVisibleOnly: true },
        toJSON: () => subscription,
        unsubscribe: async () => {
          localStorage.removeItem('push-stand-in')
          state.pushCurrent = null
          return true
        },
      } as unknown as PushSubscription
      return state.pushCurrent
    }
    if (localStorage.getItem('push-stand-in')) made(null)
    const request = Notification.requestPermission.bind(Notification)
    Notification.requestPermission = () => {
      state.pushCalls.permissionPrompts++
      return request()
    }
    PushManager.prototype.subscribe = async (options?: PushSubscriptionOptionsInit) => {
      const key = keyOf(options)
      state.pushCalls.subscribe.push({ userVisibleOnly: Boolean(options?.userVisibleOnly), key })
      return made(options?.applicationServerKey)
    }
    PushManager.prototype.getSubscription = async () => state.pushCurrent
  }
  return { script, arg: { subscription, keyOfSource: keyOf.toString() }, calls }
}

async function pushState(page: Page) {
  return page.evaluate(async () => {
    const registration = await navigator.serviceWorker.getRegistration('/')
    const { pushCalls } = window as unknown as { pushCalls: { subscribe: unknown[]; permissionPrompts: number } }
    return {
      permission: Notification.permission,
      worker: registration ? { scope: registration.scope, script: registration.active?.scriptURL ?? '' } : undefined,
      calls: pushCalls,
    }
  })
}

test('turning on notifications registers /sw.js and subscribes; a chat message becomes a notification that opens the chat', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const webPush = webPushSettings()
  const pushService = await startPushService(t, webPush)
  const system = await startSystem(t, 'sqlite', { WebPush: webPush })
  const alice = await signedInPerson(browser, system, 'alice@example.com', 'Alice')
  const bob = await signedInPerson(browser, system, 'bob@example.com', 'Bob')
  const browserSubscription = pushService.subscribe()
  const standIn = pushManagerStandIn(browserSubscription)
  await alice.context.addInitScript(standIn.script, standIn.arg)

  // Opening the account page asks nothing and registers nothing while notifications are not allowed.
  await alice.page.goto(`${system.url}/chat/account`)
  const panel = alice.page.locator('section', { has: alice.page.getByRole('heading', { name: 'Notifications' }) })
  await panel.getByText('Notifications are off in this browser.').waitFor()
  const before = await pushState(alice.page)
  assert.deepEqual(before, { permission: 'default', worker: undefined, calls: { subscribe: [], permissionPrompts: 0 } })

  await alice.context.grantPermissions(['notifications'], { origin: system.url })
  await panel.getByRole('button', { name: 'Turn on notifications' }).click()
  await panel.getByRole('status').filter({ hasText: 'Notifications are turned on.' }).waitFor()
  await panel.getByText(/^Notifications are on in this browser/).waitFor()
  await checkAccessibility(alice.page, 'account with notifications on')
  const after = await pushState(alice.page)
  assert.equal(after.permission, 'granted')
  assert.deepEqual(after.worker, { scope: `${system.url}/`, script: `${system.url}/sw.js` })
  assert.deepEqual(after.calls, {
    subscribe: [{ userVisibleOnly: true, key: webPush.PublicKey }],
    permissionPrompts: 1,
  })
  const stored = () =>
    system.gateway.store.db.selectFrom('push_subscriptions').select(['crm_id', 'endpoint', 'p256dh', 'auth']).execute()
  assert.deepEqual(await stored(), [
    {
      crm_id: Number(alice.crmId),
      endpoint: browserSubscription.endpoint,
      p256dh: browserSubscription.keys.p256dh,
      auth: browserSubscription.keys.auth,
    },
  ])

  // Bob writes to Alice: the gateway pushes the notification to her browser's push service.
  await openPrivateChat(bob.page, 'Alice')
  await send(bob.page, 'Lunch at noon?')
  await until(() => pushService.receivedAt(browserSubscription.endpoint).length === 1, 'the push for Bob’s message')
  const { message } = pushService.receivedAt(browserSubscription.endpoint)[0]!
  assert.equal(message.title, 'Bob')
  assert.equal(message.body, 'Lunch at noon?')
  assert.equal(message.url, `/chat/c/${bob.crmId}`)

  // That payload, delivered to the worker the client registered, shows as a notification whose
  // click target is the private chat with Bob.
  const cdp = await alice.context.newCDPSession(alice.page)
  const registrations: { registrationId: string; scopeURL: string }[] = []
  cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations: updated }) => registrations.push(...updated))
  await cdp.send('ServiceWorker.enable')
  await until(() => registrations.some(({ scopeURL }) => scopeURL === `${system.url}/`), 'the worker registration')
  const { registrationId } = registrations.find(({ scopeURL }) => scopeURL === `${system.url}/`)!
  // Delivered once the worker is active; a push that reached a worker still starting is sent again
  // (the notification's tag makes a second one replace the first, never add to it).
  await alice.page.evaluate(async () => Boolean(await navigator.serviceWorker.ready))
  const deliver = () =>
    cdp.send('ServiceWorker.deliverPushMessage', { origin: system.url, registrationId, data: JSON.stringify(message) })
  await deliver()
  let lastDelivery = Date.now()
  const shown = async () =>
    alice.page.evaluate(async () =>
      (await (await navigator.serviceWorker.ready).getNotifications()).map((notification) => ({
        title: notification.title,
        body: notification.body,
        tag: notification.tag,
        url: (notification.data as { url?: string }).url,
      })),
    )
  await until(async () => {
    if ((await shown()).length === 1) return true
    if (Date.now() - lastDelivery > 3_000) {
      await deliver()
      lastDelivery = Date.now()
    }
    return false
  }, 'the notification shown by /sw.js')
  assert.deepEqual(await shown(), [
    { title: 'Bob', body: 'Lunch at noon?', tag: message.tag, url: `${system.url}/chat/c/${bob.crmId}` },
  ])

  // A later page load hands the browser's subscription to the gateway again (here after the
  // gateway lost it), without asking anything and without subscribing anew.
  await system.gateway.store.db.deleteFrom('push_subscriptions').execute()
  await alice.page.reload()
  await panel.getByText(/^Notifications are on in this browser/).waitFor()
  await until(async () => (await stored()).length === 1, 'the subscription renewed at start')
  assert.equal((await stored())[0]!.endpoint, browserSubscription.endpoint)
  assert.deepEqual((await pushState(alice.page)).calls, { subscribe: [], permissionPrompts: 0 })

  // Turning off removes the subscription at the gateway and in the browser.
  await panel.getByRole('button', { name: 'Turn off notifications' }).click()
  await panel.getByRole('status').filter({ hasText: 'Notifications are turned off.' }).waitFor()
  await panel.getByRole('button', { name: 'Turn on notifications' }).waitFor()
  assert.deepEqual(await stored(), [])

  // Signing out turns them off too: the next person on this browser chooses for themselves.
  await panel.getByRole('button', { name: 'Turn on notifications' }).click()
  await panel.getByText(/^Notifications are on in this browser/).waitFor()
  assert.equal((await stored()).length, 1)
  await alice.page.goto(`${system.url}/chat/`)
  await alice.page.getByText('Profile', { exact: true }).click()
  await alice.page.getByRole('button', { name: 'Sign out' }).click()
  await alice.page.waitForURL(`${system.url}/chat/sign-in`)
  assert.deepEqual(await stored(), [])
  assert.equal(await alice.page.evaluate(() => localStorage.getItem('push-stand-in')), null, 'the browser unsubscribed')
  assert.deepEqual(alice.errors, [])
})

test('a browser that refuses notifications is told how to allow them, and nothing is subscribed', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const webPush = webPushSettings()
  const system = await startSystem(t, 'sqlite', { WebPush: webPush })
  const carol = await signedInPerson(browser, system, 'carol@example.com', 'Carol')

  // Headless Chromium answers the permission prompt with "denied" unless the test grants it.
  await carol.page.goto(`${system.url}/chat/account`)
  const panel = carol.page.locator('section', { has: carol.page.getByRole('heading', { name: 'Notifications' }) })
  await panel.getByRole('button', { name: 'Turn on notifications' }).click()
  await panel
    .getByRole('status')
    .filter({ hasText: /^Notifications are blocked for this site/ })
    .waitFor()
  assert.equal(await panel.getByRole('button').count(), 0, 'no control that cannot work')
  assert.equal(await carol.page.evaluate(() => navigator.serviceWorker.getRegistration('/').then(Boolean)), false)
  assert.deepEqual(await system.gateway.store.db.selectFrom('push_subscriptions').selectAll().execute(), [])
  assert.deepEqual(carol.errors, [])
})

test('where the gateway has Web Push off, the account page offers no notifications', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const system = await startSystem(t)
  const dave = await signedInPerson(browser, system, 'dave@example.com', 'Dave')

  await dave.page.goto(`${system.url}/chat/account`)
  await dave.page.getByRole('heading', { name: 'Email and phone' }).waitFor()
  // The panel decides after GET /auth/v1/notifications/public_key has answered PushDisabled.
  await dave.page.waitForLoadState('networkidle')
  assert.equal(await dave.page.getByRole('heading', { name: 'Notifications' }).count(), 0)
  assert.deepEqual(dave.errors, [])
})
