import assert from 'node:assert/strict'
import { type TestContext, test } from 'node:test'
import { Client } from 'pg'
import { createTestDatabaseUrl, onlyWithPostgres, until } from '../testing/index.ts'
import { postgresConnection } from './database.ts'
import { notifyChannelName, openNotifyChannel } from './notify-channel.ts'

/**
 * A connection on `names` that collects what it hears (payloads of `test_signals` as they are,
 * of other channels as `<name>: <payload>`) and its errors; closed after the test.
 */
function listener(t: TestContext, url: string, names = ['test_signals']) {
  const heard: string[] = []
  const errors: unknown[] = []
  const channel = openNotifyChannel({
    url,
    names,
    onMessage: (name, payload) => heard.push(name === 'test_signals' ? payload : `${name}: ${payload}`),
    onError: (error) => errors.push(error),
    retryMs: 50,
  })
  t.after(() => channel.close())
  return { channel, heard, errors }
}

test(
  'a notification reaches the other listeners of its channel in its schema, not its sender, another schema or channel',
  onlyWithPostgres(),
  async (t) => {
    const url = await createTestDatabaseUrl(t, 'postgres')
    const elsewhere = await createTestDatabaseUrl(t, 'postgres')
    const one = listener(t, url)
    const two = listener(t, url)
    const three = listener(t, url)
    const otherSchema = listener(t, elsewhere)
    const otherName = listener(t, url, ['other_signals'])
    const both = listener(t, url, ['test_signals', 'other_signals'])
    await Promise.all([one, two, three, otherSchema, otherName, both].map(({ channel }) => channel.listening()))

    await one.channel.publish('test_signals', 'first')
    await two.channel.publish('test_signals', 'second, with "quotes" and ünïcode')
    await both.channel.publish('other_signals', 'on the other channel')
    await until(() => three.heard.length === 2, 'both at the third listener')
    await until(() => one.heard.length === 1 && two.heard.length === 1, 'each at the other')
    assert.deepEqual(three.heard, ['first', 'second, with "quotes" and ünïcode'])
    assert.deepEqual(one.heard, ['second, with "quotes" and ünïcode'])
    assert.deepEqual(two.heard, ['first'])
    // A barrier: anything the other schema or name would have heard came before it.
    await one.channel.publish('test_signals', 'barrier')
    await until(() => three.heard.includes('barrier') && both.heard.includes('barrier'), 'the barrier')
    assert.deepEqual(otherSchema.heard, [])
    assert.deepEqual(otherName.heard, ['other_signals: on the other channel'])
    assert.deepEqual(both.heard, ['first', 'second, with "quotes" and ünïcode', 'barrier'])
    assert.deepEqual(three.heard, ['first', 'second, with "quotes" and ünïcode', 'barrier'])
    assert.deepEqual([...one.errors, ...two.errors, ...three.errors], [])
  },
)

test('a listener whose connection the server ends connects and listens again', onlyWithPostgres(), async (t) => {
  const url = await createTestDatabaseUrl(t, 'postgres')
  const sender = listener(t, url)
  const receiver = listener(t, url)
  await Promise.all([sender.channel.listening(), receiver.channel.listening()])
  const { schema, poolMax: _poolMax, ...connection } = postgresConnection(url)
  const admin = new Client(connection)
  await admin.connect()
  t.after(() => admin.end())
  const listeners = async () =>
    (
      await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE query = $1', [
        `LISTEN "${notifyChannelName('test_signals', schema)}"`,
      ])
    ).rows.map((row) => row.pid)
  const before = await listeners()
  assert.equal(before.length, 2)
  // The receiver's backend is ended (a failover, an operator's pg_terminate_backend).
  const [first] = before
  await admin.query('SELECT pg_terminate_backend($1)', [first])
  await until(async () => (await listeners()).length === 2 && !(await listeners()).includes(first!), 'a new LISTEN')
  await Promise.all([sender.channel.listening(), receiver.channel.listening()])
  await sender.channel.publish('test_signals', 'after the reconnect')
  await receiver.channel.publish('test_signals', 'and the other way')
  await until(
    () => receiver.heard.includes('after the reconnect') && sender.heard.includes('and the other way'),
    'both directions after the reconnect',
  )
  assert.ok([...sender.errors, ...receiver.errors].length >= 1, 'the lost connection was reported')
})
