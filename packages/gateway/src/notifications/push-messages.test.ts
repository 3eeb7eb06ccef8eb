import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type BroadcastEvent, ChatMessFlags, ChatType } from '@atrium/platform'
import { type PushLookups, pushMessageFor } from './push-messages.ts'

// What the chat module and the users table would answer for these events.
const lookups: PushLookups = {
  chat: async (chatId) =>
    ({ '10': { type: ChatType.Private, name: '' }, '20': { type: ChatType.InfoChannel, name: 'News' } })[chatId],
  userName: async (crmId) => (crmId === 1002 ? 'Bob' : ''),
}

function chatEvent(data: Record<string, unknown>): BroadcastEvent {
  return {
    module: 'chat',
    tick: 42,
    type: 'NewChatMessage',
    data: { message_id: '5', chat_id: '10', sender: '1002', content: 'Hello', flags: 0, ...data },
  }
}

test('message bodies: files, calls, long text; hidden, deleted and own messages are not pushed', async () => {
  const file = await pushMessageFor(
    1001,
    chatEvent({ flags: ChatMessFlags.File, content: '', file: { name: 'report.pdf', size: 10 } }),
    lookups,
  )
  assert.equal(file?.body, '📎 report.pdf')
  assert.equal(
    (await pushMessageFor(1001, chatEvent({ flags: ChatMessFlags.Call, content: '' }), lookups))?.body,
    'Call',
  )
  // A placed call carries its record: the person called reads who is calling, not JSON.
  const ringing = JSON.stringify({ media: 'video', state: 'ringing', caller: '1002', callee: '1001' })
  const busy = JSON.stringify({ media: 'audio', state: 'ended', caller: '1002', callee: '1001', end_reason: 'busy' })
  assert.equal(
    (await pushMessageFor(1001, chatEvent({ flags: ChatMessFlags.Call, content: ringing }), lookups))?.body,
    '📞 Incoming video call',
  )
  assert.equal(
    (await pushMessageFor(1001, chatEvent({ flags: ChatMessFlags.Call, content: busy }), lookups))?.body,
    '📞 Missed call',
  )
  const long = await pushMessageFor(1001, chatEvent({ content: `${'word '.repeat(100)}\n\nend` }), lookups)
  assert.equal(long?.body.length, 180)
  assert.ok(long?.body.endsWith('…'))

  for (const flags of [ChatMessFlags.WidgetCommand, ChatMessFlags.Deleted]) {
    assert.equal(await pushMessageFor(1001, chatEvent({ flags }), lookups), undefined, `flags ${flags}`)
  }
  assert.equal(await pushMessageFor(1002, chatEvent({}), lookups), undefined, 'the sender is not pushed')
  const read: BroadcastEvent = { module: 'chat', tick: 43, type: 'MessageRead', data: { chat_id: '10' } }
  assert.equal(await pushMessageFor(1001, read, lookups), undefined, 'read markers are left to SSE')
})

test('an info channel post shows the channel; an unknown chat opens the messenger', async () => {
  const channel = await pushMessageFor(1001, chatEvent({ chat_id: '20', content: 'Release out' }), lookups)
  assert.deepEqual([channel?.title, channel?.body, channel?.url], ['News', 'Release out', '/chat/c/20'])
  const unknown = await pushMessageFor(1001, chatEvent({ chat_id: '30' }), lookups)
  assert.deepEqual([unknown?.title, unknown?.url, unknown?.tag], ['Bob', '/chat/', 'chat-30'])
  const nameless = await pushMessageFor(1001, chatEvent({ sender: '1003' }), lookups)
  assert.deepEqual([nameless?.title, nameless?.url], ['Someone', '/chat/c/1003'])
})

test('incoming wallet transactions open their page and share one tag; outgoing ones and balances are not pushed', async () => {
  const data = { id: 'tx81', currency: 'EUR', tx_type: 1, state: 1, amount: 12.5, fee: 0, tick: '7' }
  const incoming = await pushMessageFor(1001, { module: 'wallet', tick: 7, type: 'TxInWallet', data }, lookups)
  assert.deepEqual(incoming, {
    title: 'Incoming payment',
    body: '12.5 EUR',
    url: '/wallet/tx/tx81',
    tag: 'wallet-tx-tx81',
    module: 'wallet',
    type: 'TxInWallet',
    tick: 7,
  })
  const changed = await pushMessageFor(1001, { module: 'wallet', tick: 8, type: 'TxStateChanged', data }, lookups)
  assert.deepEqual([changed?.title, changed?.tag], ['Transaction updated', 'wallet-tx-tx81'])
  const paid = { module: 'wallet', tick: 9, type: 'TxInWallet', data: { ...data, amount: -12.5 } }
  assert.equal(await pushMessageFor(1002, paid, lookups), undefined, 'the payer’s own transfer is not pushed')
  const balance = { module: 'wallet', tick: 9, type: 'BalanceChanged', data: { currency: 'EUR' } }
  assert.equal(await pushMessageFor(1001, balance, lookups), undefined)
  const odd = { module: 'wallet', tick: 10, type: 'TxInWallet', data: { ...data, id: '../../x' } }
  assert.equal(await pushMessageFor(1001, odd, lookups), undefined, 'an id that is not a path segment')
})
