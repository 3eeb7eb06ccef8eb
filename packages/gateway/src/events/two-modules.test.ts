import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { type DatabaseDialect, RouteFlags } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { SERVICE_SECRET } from '../../../chat/test/support.ts'
import { startWallet } from '../../../reference/test/support.ts'
import { openEvents, startEventsWorld } from '../../test/events.ts'

/**
 * A gateway polling two modules: the chat module (through the recording proxy) and the reference
 * wallet, with `/wallet/` routed to the wallet as `npm start` does.
 */
async function startTwoModules(t: TestContext, dialect: DatabaseDialect) {
  let world: Awaited<ReturnType<typeof startEventsWorld>> | undefined
  // Added before the wallet starts, so the gateway's polls end before the wallet stops.
  t.after(() => world?.gateway.stop())
  const wallet = await startWallet(t, dialect, { ServiceSecret: SERVICE_SECRET })
  world = await startEventsWorld(t, dialect, { settings: { Modules: { wallet: wallet.base } } })
  await world.gateway.app.store.routes.add({ prefix: '/wallet/', upstream: 'wallet', flags: RouteFlags.RequireSession })
  const { gateway } = world

  /** A signed-in user who can also use the wallet through the gateway. */
  async function signedIn() {
    const user = await world!.signedIn()
    async function walletCall(method: 'GET' | 'POST', operation: string, body?: object) {
      const response = await fetch(`${gateway.url}/wallet/v1/${operation}`, {
        method,
        headers: {
          cookie: user.cookie,
          ...(body ? { 'x-csrf-token': user.csrf, 'content-type': 'application/json' } : {}),
        },
        body: body && JSON.stringify(body),
      })
      const envelope = await json(response)
      assert.equal(response.status, 200, JSON.stringify(envelope))
      return envelope.result
    }
    return {
      ...user,
      send: (to: number, amount: number) =>
        walletCall('POST', 'send', { to: String(to), currency: 'USD', amount, comment: 'via gateway' }),
      balance: () => walletCall('GET', 'balance?currency=USD'),
    }
  }
  return { ...world, wallet, signedIn }
}

forEachDialect(
  'one SSE stream carries both the chat’s and the wallet’s events, to their addressees only',
  async (t, dialect) => {
    const world = await startTwoModules(t, dialect)
    const [alice, bob, carol] = [await world.signedIn(), await world.signedIn(), await world.signedIn()]
    const team = (await alice.post('create_chat', { type: 2, name: 'Team', members: [String(bob.crmId)] })).chat.id
    await world.wallet.deposit(alice.crmId, 'USD', 100)
    const bobStream = openEvents(t, world.gateway.url, bob.cookie)
    const carolStream = openEvents(t, world.gateway.url, carol.cookie)
    await Promise.all([bobStream.opened(), carolStream.opened()])

    await alice.post('send_message', { chat_id: team, content: 'Paying you back' })
    const sent = await alice.send(bob.crmId, 25)
    await bobStream.until(() => bobStream.events.length >= 3, 'the message, the transfer and the balance')

    const byType = new Map(bobStream.events.map((event) => [event.type, event]))
    assert.deepEqual(bobStream.events.map((event) => `${event.module}:${event.type}`).sort(), [
      'chat:NewChatMessage',
      'wallet:BalanceChanged',
      'wallet:TxInWallet',
    ])
    assert.equal(byType.get('NewChatMessage')!.data.content, 'Paying you back')
    const tx = byType.get('TxInWallet')!
    assert.deepEqual(
      { ...tx.data, datetime: undefined },
      {
        id: sent.transaction.id,
        currency: 'USD',
        tx_type: 2,
        state: 2,
        amount: 25,
        fee: 0,
        datetime: undefined,
        partner: { crm_id: String(alice.crmId), name: '' },
        comment: 'via gateway',
        tick: String(tx.tick),
      },
    )
    assert.deepEqual(byType.get('BalanceChanged')!.data, {
      currency: 'USD',
      balance: 25,
      hold: 0,
      available: 25,
      tx_id: sent.transaction.id,
      tick: String(byType.get('BalanceChanged')!.tick),
    })
    assert.deepEqual(await bob.balance(), { currency: 'USD', balance: 25, hold: 0, available: 25 })

    // Barriers, one per module and stream: a later chat message and a later transfer to each of
    // them. Anything else either module sent Bob or Carol would reach the stream before these.
    const aside = (await alice.post('create_chat', { type: 2, name: 'Aside', members: [String(carol.crmId)] })).chat.id
    await alice.post('send_message', { chat_id: aside, content: 'barrier for Carol' })
    await alice.post('send_message', { chat_id: team, content: 'barrier for Bob' })
    const toCarol = await alice.send(carol.crmId, 1)
    const toBob = await alice.send(bob.crmId, 1)
    const barrierOf = (stream: typeof bobStream, content: string, txId: string) =>
      stream.until(
        () =>
          stream.contents().includes(content) &&
          stream.events.some((event) => event.type === 'TxInWallet' && event.data.id === txId),
        `the barriers for ${content}`,
      )
    await barrierOf(carolStream, 'barrier for Carol', toCarol.transaction.id)
    await barrierOf(bobStream, 'barrier for Bob', toBob.transaction.id)
    const beyond = (stream: typeof bobStream, chatId: string, txId: string) =>
      stream.events.filter((event) =>
        event.module === 'chat' ? event.data.chat_id !== chatId : event.data.id !== txId && event.data.tx_id !== txId,
      )
    assert.deepEqual(beyond(carolStream, aside, toCarol.transaction.id), [], 'Carol receives nothing of either module')
    assert.deepEqual(
      beyond(bobStream, team, toBob.transaction.id).map((event) => event.type),
      ['TxInWallet', 'BalanceChanged'],
      'Bob receives nothing of Alice’s side',
    )
  },
)

forEachDialect(
  'a reconnect delivers what both modules emitted meanwhile, once, in each module’s order',
  async (t, dialect) => {
    const world = await startTwoModules(t, dialect)
    const [alice, bob] = [await world.signedIn(), await world.signedIn()]
    const team = (await alice.post('create_chat', { type: 2, name: 'Team', members: [String(bob.crmId)] })).chat.id
    await world.wallet.deposit(alice.crmId, 'USD', 100)
    const first = openEvents(t, world.gateway.url, bob.cookie)
    await first.opened()
    await alice.send(bob.crmId, 1)
    await first.until(() => first.events.length === 2, 'the first transfer')
    first.close()

    await alice.post('send_message', { chat_id: team, content: 'one' })
    await alice.send(bob.crmId, 2)
    await alice.post('send_message', { chat_id: team, content: 'two' })
    const again = openEvents(t, world.gateway.url, bob.cookie, { query: `?since=${first.maxTick()}` })
    await again.until(() => again.events.length === 4, 'the replay')
    await alice.send(bob.crmId, 3)
    await again.until(() => again.events.length === 6, 'the live transfer')

    // Each module's events arrive in its cursor order; live polls of two modules may interleave.
    const of = (module: string) => again.events.filter((event) => event.module === module)
    assert.deepEqual(
      of('chat').map((event) => event.data.content),
      ['one', 'two'],
    )
    assert.deepEqual(
      of('wallet').map((event) => `${event.type}:${event.data.amount ?? event.data.balance}`),
      ['TxInWallet:2', 'BalanceChanged:3', 'TxInWallet:3', 'BalanceChanged:6'],
    )
    for (const module of ['chat', 'wallet']) {
      const ticks = of(module).map((event) => event.tick)
      assert.deepEqual(
        ticks,
        [...ticks].sort((a, b) => a - b),
        `${module} ticks only grow`,
      )
    }
    const ticks = again.events.map((event) => event.tick)
    assert.equal(new Set(ticks).size, ticks.length, 'no event twice')
    assert.ok(Math.min(...ticks) > first.maxTick(), 'nothing before since')
  },
)

forEachDialect('the wallet route needs a session', async (t, dialect) => {
  const world = await startTwoModules(t, dialect)
  const response = await fetch(`${world.gateway.url}/wallet/v1/balance?currency=USD`)
  assert.equal(response.status, 401)
  assert.equal((await json(response)).error.code, 2003)
})
