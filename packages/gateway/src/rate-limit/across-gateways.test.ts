import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  createTestDatabaseUrl,
  listen,
  onlyWithPostgres,
  requestWithHeaders as send,
  until,
} from '@atrium/platform/testing'
import { createClock, SERVICE_SECRET } from '../../test/support.ts'
import { buildGateway } from '../app.ts'
import { loadGatewayConfig } from '../config.ts'

const OFF = { Connection: { Requests: 0 }, Session: { Requests: 0 }, ApiKey: { Requests: 0 }, Bandwidth: { Bytes: 0 } }

test(
  'two gateway nodes on one PostgreSQL database share a session’s limit: together they admit about the limit, not twice it',
  onlyWithPostgres(),
  async (t) => {
    const limit = 30
    const database = await createTestDatabaseUrl(t, 'postgres')
    // One clock for both: the window never ends during the test.
    const clock = createClock()
    const gateways = await Promise.all(
      [1, 2].map(async (node) => {
        const config = loadGatewayConfig(
          {
            GatewayDB: database,
            ServiceSecret: SERVICE_SECRET,
            NodeNumber: node,
            RateLimits: { ...OFF, Session: { Requests: limit, WindowSeconds: 60 } },
          },
          {},
        )
        const app = await buildGateway(config, { now: clock.now })
        return { app, url: await listen(t, app) }
      }),
    )
    await Promise.all(gateways.map(({ app }) => app.linked()))
    const user = await gateways[0]!.app.store.users.create({ name: 'Busy' })
    const { token } = await gateways[0]!.app.store.sessions.create({
      crmId: user.crm_id,
      method: 'test',
      ip: '127.0.0.1',
      userAgent: 't',
    })
    const headers = { authorization: `Bearer ${token}` }

    // One request per poll (every 20 ms), taking turns between the nodes, until both refuse.
    const admitted = [0, 0]
    const refused = [false, false]
    let turn = 0
    await until(
      async () => {
        const node = turn++ % 2
        const answer = await send(`${gateways[node]!.url}/auth/v1/session`, { headers })
        if (answer.status === 200) admitted[node]! += 1
        else {
          assert.equal(answer.status, 429, answer.body)
          assert.equal(JSON.parse(answer.body).error.details.scope, 'session')
          refused[node] = true
        }
        return refused[0]! && refused[1]!
      },
      'both nodes refusing the session',
      30_000,
    )
    const total = admitted[0]! + admitted[1]!
    // Each node counts its own at once and the other's every 100 ms: a few requests of slack, not
    // the limit again (a window per node would admit up to twice the limit).
    assert.ok(total >= limit, `admitted ${total}, at least the limit ${limit}`)
    assert.ok(total <= limit + 10, `admitted ${total} (${admitted.join(' + ')}) for a limit of ${limit} on two nodes`)
  },
)
