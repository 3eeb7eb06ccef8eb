import assert from 'node:assert/strict'
import { forEachDialect, metricValue, until } from '@atrium/platform/testing'
import { startWebhookReceiver, startWebhookWorld } from '../../test/webhooks.ts'

forEachDialect('the webhook queue and attempts are measured by state and outcome', async (t, dialect) => {
  const maxAttempts = 3
  // Retries 1–2 s apart: time to see the delivery pending between attempts, even on a loaded machine.
  const world = await startWebhookWorld(t, dialect, {
    webhooks: { MaxAttempts: maxAttempts, BackoffBaseMs: 2000, BackoffMaxMs: 2000 },
  })
  const scrape = () => world.gateway.app.metrics.registry.metrics()
  const queue = async (state: string) => metricValue(await scrape(), 'atrium_webhook_queue', { state })
  const attempts = async (outcome: string) => metricValue(await scrape(), 'atrium_webhook_attempts_total', { outcome })
  const hook = await startWebhookReceiver(t)
  const shop = await world.appWith(hook.url)

  hook.answer(500)
  await shop.send('refused every time')
  await until(() => hook.requests.length >= 1, 'a first attempt')
  assert.equal(await queue('pending'), 1, 'the delivery waits in the queue')
  // An attempt is counted once its outcome is stored: wait for the count, then the queue must agree.
  await until(async () => (await attempts('dead')) === 1, 'the delivery to be dead-lettered')
  assert.equal(await queue('dead'), 1)
  assert.equal(await queue('pending'), 0)
  assert.equal(hook.requests.length, maxAttempts)
  assert.equal(await attempts('failed'), maxAttempts - 1)

  hook.answer(200)
  await shop.send('accepted')
  await until(() => hook.accepted().length === 1, 'the second message accepted')
  await until(async () => (await attempts('delivered')) === 1, 'the delivery counted')
  assert.equal(await queue('pending'), 0)
  assert.equal(await queue('dead'), 1)
})
