import assert from 'node:assert/strict'
import { createSocket } from 'node:dgram'
import test, { type TestContext } from 'node:test'
import { forEachDialect, json, until } from '@atrium/platform/testing'
import { bindingRequest, stunClient } from '../../test/stun.ts'
import { capturedLog, signedInUser, startGateway } from '../../test/support.ts'
import { Attr, readXorMappedAddress } from './stun-message.ts'

type Message = { attributes: { type: number; value: Buffer }[]; transactionId: Buffer }
const xorMapped = (message: Message) => {
  const value = message.attributes.find((attribute) => attribute.type === Attr.XorMappedAddress)?.value
  return value && readXorMappedAddress(value, message.transactionId)
}

/**
 * Clients on `addresses` × `perAddress` source ports (the kernel picks a reusePort socket, so a
 * thread, by source address and port), each sending `requests` Binding requests at once; resolves
 * once every one is answered with the client's own address and port.
 */
async function loadFromManySources(
  t: TestContext,
  server: { address: string; port: number },
  addresses: string[],
  { perAddress = 4, requests = 5 } = {},
) {
  const clients = []
  for (const from of addresses) {
    for (let i = 0; i < perAddress; i++) clients.push(await stunClient(t, server, from))
  }
  const sent = clients.map((client) => {
    const list = Array.from({ length: requests }, () => bindingRequest())
    for (const { packet } of list) client.send(packet)
    return { client, list }
  })
  for (const { client, list } of sent) {
    for (const { transactionId } of list) {
      const { message } = await client.answerTo(transactionId)
      assert.deepEqual(xorMapped(message), {
        family: server.address.includes(':') && !client.local.address.includes('.') ? 'IPv6' : 'IPv4',
        address: client.local.address,
        port: client.local.port,
      })
    }
    assert.equal(client.received.length, requests, 'one answer per request, no more')
  }
  return clients
}

/** A gateway whose responder runs on `threads` worker threads, once every thread is bound. */
async function startThreaded(
  t: TestContext,
  stun: Record<string, unknown> = {},
  dialect: 'sqlite' | 'postgres' = 'sqlite',
) {
  const log = capturedLog()
  const gateway = await startGateway(t, dialect, {
    settings: { Stun: { Threads: 2, ...stun } },
    logger: { level: 'warn', stream: log.stream },
  })
  const [bound] = await gateway.app.stun.listening()
  assert.ok(bound, 'the STUN sockets are bound')
  return { ...gateway, log, stunAddress: { address: bound.address, port: bound.port } }
}

forEachDialect(
  'with two threads, requests from many sources are all answered, by both threads, and all reach /current',
  async (t, dialect) => {
    const gateway = await startThreaded(t, {}, dialect)
    const { app, stunAddress } = gateway
    assert.equal(app.stun.threads().length, 2)
    const addresses = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4']
    const clients = await loadFromManySources(t, stunAddress, addresses)

    // Each thread hands over its records in batches; all arrive, merged in one table.
    const total = clients.length * 5
    await until(() => app.stun.counts().answered === total, `${total} answers counted`)
    const byThread = app.stun.threads().map(({ answered }) => answered)
    assert.equal(
      byThread.reduce((sum, answered) => sum + answered, 0),
      total,
    )
    // 16 source ports: all on one of two threads would be a 1 in 32,768 chance.
    assert.ok(
      byThread.every((answered) => answered > 0),
      `both threads answered (${byThread.join(' and ')})`,
    )
    for (const from of addresses) {
      const ports = clients.filter((client) => client.local.address === from).map((client) => client.local.port)
      // The last 10 per address: 4 sources × 5 requests from each address, so 10 remain.
      const seen = app.stun.bindingsFrom(from)
      assert.equal(seen.length, 10)
      assert.ok(seen.every((binding) => ports.includes(binding.port) && binding.outcome === 'answered'))
    }

    // /auth/v1/stun/current, read over HTTP from 127.0.0.1, shows what both threads saw from there.
    const person = await signedInUser(gateway)
    const fromHere = clients.filter((client) => client.local.address === '127.0.0.1')
    // One more request from each source on 127.0.0.1, newest last: each of the four appears.
    for (const client of fromHere) await client.exchange()
    await until(() => app.stun.counts().answered === total + fromHere.length, 'the last answers counted')
    const response = await fetch(`${gateway.url}/auth/v1/stun/current`, { headers: person.headers })
    const { result } = await json(response)
    assert.deepEqual(result.stun, { enabled: true, listening: true, port: stunAddress.port })
    assert.equal(result.bindings.length, 10)
    const newestPorts = result.bindings.slice(0, 4).map((binding: { port: number }) => binding.port)
    assert.deepEqual(newestPorts.sort(), fromHere.map((client) => client.local.port).sort())
  },
)

test('with two threads on a dual-stack socket, IPv4 and IPv6 sources are answered with their own family', async (t) => {
  const { stunAddress } = await startThreaded(t, { Host: '::' })
  await loadFromManySources(t, { address: '::1', port: stunAddress.port }, ['::1'], { perAddress: 4, requests: 2 })
  await loadFromManySources(t, { address: '127.0.0.1', port: stunAddress.port }, ['127.0.0.1'], {
    perAddress: 4,
    requests: 2,
  })
})

test('shutdown closes every thread and every socket: the port can then be bound exclusively', async (t) => {
  const { app, stunAddress } = await startThreaded(t, { Threads: 3 })
  const workers = app.stun.threads().map(({ worker }) => worker)
  assert.equal(workers.length, 3)
  const exits = workers.map((worker) => new Promise<number>((resolve) => worker.once('exit', resolve)))
  await app.close()
  // Each thread ended by itself, after closing its socket (a terminated thread exits with 1).
  assert.deepEqual(await Promise.all(exits), [0, 0, 0])
  assert.deepEqual(app.stun.threads(), [])
  const probe = createSocket('udp4')
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject)
    probe.bind({ port: stunAddress.port, address: stunAddress.address, exclusive: true }, resolve)
  })
  await new Promise<void>((resolve) => probe.close(() => resolve()))
})

test('a thread that stops is logged and replaced; past five restarts a minute it is given up, the others go on', async (t) => {
  const { app, log, stunAddress } = await startThreaded(t)
  const [first, second] = app.stun.threads().map(({ worker }) => worker)
  assert.ok(first && second)
  await first.terminate()
  await until(
    () => app.stun.threads().length === 2 && !app.stun.threads().some(({ worker }) => worker === first),
    'a new thread in place of the stopped one',
  )
  assert.ok(log.lines.some((line) => line.includes('STUN worker thread stopped; starting another')))
  // The replacement shares the port: many sources are answered again, by both threads.
  await loadFromManySources(t, stunAddress, ['127.0.0.1', '127.0.0.2'], { perAddress: 8, requests: 1 })
  await until(() => app.stun.threads().every(({ answered }) => answered > 0), 'both threads answering')

  // Five restarts a minute at most: the thread in `first`'s place stops five more times.
  for (let i = 0; i < 5; i++) {
    const replacement = app.stun.threads().find(({ worker }) => worker !== second)
    assert.ok(replacement, `a replacement thread (${i + 1})`)
    await replacement.worker.terminate()
    if (i < 4) await until(() => app.stun.threads().length === 2, 'the next replacement')
  }
  await until(
    () => log.lines.some((line) => line.includes('STUN worker thread stopped too often; STUN stopped on that thread')),
    'the give-up line',
  )
  assert.deepEqual(
    app.stun.threads().map(({ worker }) => worker),
    [second],
  )
  // The remaining thread answers every source, and /current still says STUN is listening.
  await loadFromManySources(t, stunAddress, ['127.0.0.1', '127.0.0.3'], { perAddress: 4, requests: 2 })
  assert.equal(app.stun.addresses()[0]?.port, stunAddress.port)

  // The last one stops too, within the same minute: not replaced, and the responder says it is not
  // listening (/auth/v1/stun/current shows "listening": false).
  await second.terminate()
  await until(() => app.stun.threads().length === 0, 'no thread left')
  assert.equal(log.lines.filter((line) => line.includes('STUN stopped on that thread')).length, 2)
  assert.deepEqual(app.stun.addresses(), [])
  const silent = await stunClient(t, stunAddress)
  const probe = bindingRequest()
  silent.send(probe.packet)
  await assert.rejects(
    until(() => silent.received.length > 0, 'an answer', 300),
    /timed out/,
  )
})

test('with threads, a UDP port already taken is logged, no thread is left running, HTTP goes on', async (t) => {
  const holder = createSocket('udp4')
  await new Promise<void>((resolve) => holder.bind({ port: 0, address: '127.0.0.1', exclusive: true }, resolve))
  t.after(() => new Promise<void>((resolve) => holder.close(() => resolve())))
  const log = capturedLog()
  const gateway = await startGateway(t, 'sqlite', {
    settings: { Stun: { Threads: 2, Port: holder.address().port } },
    logger: { level: 'error', stream: log.stream },
  })
  await assert.rejects(gateway.app.stun.listening(), { code: 'EADDRINUSE' })
  assert.ok(log.lines.some((line) => line.includes('STUN responder could not bind')))
  assert.deepEqual(gateway.app.stun.threads(), [])
  assert.deepEqual(gateway.app.stun.addresses(), [])
  assert.equal((await fetch(`${gateway.url}/auth/v1/health`)).status, 200)
})
