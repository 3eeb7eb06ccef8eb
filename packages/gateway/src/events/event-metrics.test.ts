import assert from 'node:assert/strict'
import { forEachDialect, metricValue, until } from '@atrium/platform/testing'
import { openEvents, startEventsWorld } from '../../test/events.ts'

forEachDialect('SSE streams, deliveries, received events and their lag are measured', async (t, dialect) => {
  const { gateway, signedIn } = await startEventsWorld(t, dialect)
  const scrape = () => gateway.app.metrics.registry.metrics()
  const [alice, bob] = [await signedIn(), await signedIn()]
  const team = (await alice.post('create_chat', { type: 2, name: 'Team', members: [String(bob.crmId)] })).chat.id
  const before = await scrape()
  assert.equal(metricValue(before, 'atrium_sse_streams'), 0)

  const aliceStream = openEvents(t, gateway.url, alice.cookie)
  const bobStream = openEvents(t, gateway.url, bob.cookie)
  await Promise.all([aliceStream.opened(), bobStream.opened()])
  assert.equal(metricValue(await scrape(), 'atrium_sse_streams'), 2)

  const sent = 3
  for (let index = 0; index < sent; index++) await alice.post('send_message', { chat_id: team, content: `m${index}` })
  await bobStream.until(() => bobStream.contents().length === sent, 'every message on Bob’s stream')
  await aliceStream.until(() => aliceStream.contents().length === sent, 'every message on Alice’s stream')
  const after = await scrape()

  const delta = (name: string, labels: Record<string, string> = {}) =>
    metricValue(after, name, labels) - metricValue(before, name, labels)
  // Every event either stream received was written once to it.
  assert.equal(delta('atrium_sse_deliveries_total'), aliceStream.events.length + bobStream.events.length)
  // Both streams share one poll: each event was received once, however many streams it reached.
  const ticks = new Set([...aliceStream.events, ...bobStream.events].map((event) => event.tick))
  assert.equal(delta('atrium_events_received_total', { module: 'chat' }), ticks.size)
  assert.equal(delta('atrium_event_lag_seconds_count', { module: 'chat' }), ticks.size)
  const lag = delta('atrium_event_lag_seconds_sum', { module: 'chat' })
  assert.ok(lag >= 0 && lag < ticks.size * 5, `the events took ${lag} s in all`)

  bobStream.close()
  await until(
    async () => metricValue(await scrape(), 'atrium_sse_streams') === 1,
    'the closed stream to be counted out',
  )
})

forEachDialect('failed polls are counted per module while the module is unreachable', async (t, dialect) => {
  const { gateway, proxy, signedIn } = await startEventsWorld(t, dialect)
  const pollFailures = async () =>
    metricValue(await gateway.app.metrics.registry.metrics(), 'atrium_event_poll_failures_total', { module: 'chat' })
  const bob = await signedIn()
  const stream = openEvents(t, gateway.url, bob.cookie)
  await stream.opened()
  assert.equal(await pollFailures(), 0)

  await proxy.stop()
  await until(async () => (await pollFailures()) >= 1, 'a failed poll to be counted')
  await proxy.start()
})
