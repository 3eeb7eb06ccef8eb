import assert from 'node:assert/strict'
import { forEachDialect, until } from '@atrium/platform/testing'
import { BRIDGE_DOMAIN, type Bridge, deliver, emailMessages, startMailBridge } from '../../test/mail-peers.ts'

// The chat module's reply hook (packages/chat/src/mail/mail-replies.ts), driven end to end: mail in
// through the gateway's bridge, a post in the chat, the reply caught by the chat's SMTP relay.

async function replyRoundTrip(bridge: Bridge, subject: string) {
  const first = await deliver(bridge, { subject, text: 'First question', messageId: '<q1@example.org>' })
  assert.equal(first.code, 250, first.text)
  const [inbound] = await emailMessages(bridge.owner)
  await bridge.owner.ok('send_message', { chat_id: inbound!.chat_id, content: 'Here is the answer' })
  await until(() => bridge.sink.received.length > 0, 'the reply by email')
  assert.equal(bridge.sink.received.length, 1)
  return { inbound: inbound!, mailed: bridge.sink.received[0]! }
}

forEachDialect(
  'a reply in the chat goes back threaded, and the answer to it lands in the same chat',
  async (t, dialect) => {
    const bridge = await startMailBridge(t, dialect)

    const { inbound, mailed } = await replyRoundTrip(bridge, 'Flat on Main St')

    assert.deepEqual(mailed.envelopeTo, ['alice@example.org'])
    assert.equal(mailed.mail.from?.value[0]?.address, `${bridge.code}@${BRIDGE_DOMAIN}`)
    assert.equal(mailed.mail.from?.value[0]?.name, 'Olga Owner')
    assert.equal(mailed.mail.subject, 'Re: Flat on Main St')
    assert.equal(mailed.mail.inReplyTo, '<q1@example.org>')
    assert.deepEqual([mailed.mail.references].flat(), ['<q1@example.org>'])
    assert.match(mailed.mail.text ?? '', /Here is the answer/)
    assert.equal(mailed.mail.headers.get('x-loop'), BRIDGE_DOMAIN)
    const replyId = mailed.mail.messageId!
    assert.match(replyId, new RegExp(`@${BRIDGE_DOMAIN.replace('.', '\\.')}>$`))

    // The sender answers the reply from their mail client: same thread, same chat.
    const answer = await deliver(bridge, {
      subject: 'Re: Re: Flat on Main St',
      text: 'Thanks!',
      inReplyTo: replyId,
      references: `<q1@example.org> ${replyId}`,
    })
    assert.equal(answer.code, 250, answer.text)
    const messages = await emailMessages(bridge.owner)
    assert.deepEqual(
      messages.map((m) => [m.chat_id, m.content]),
      [
        [inbound.chat_id, 'First question'],
        [inbound.chat_id, 'Thanks!'],
      ],
    )
    // Mail stored from email is never mailed back: the sink still holds only the one reply.
    assert.equal(bridge.sink.received.length, 1)
  },
)

forEachDialect('an odd Subject (encoded CR LF, a header inside) stays one line in the reply', async (t, dialect) => {
  const bridge = await startMailBridge(t, dialect)
  const odd = 'Hello\r\nBcc: mallory@evil.test'

  const { mailed } = await replyRoundTrip(bridge, odd)

  assert.deepEqual(mailed.envelopeTo, ['alice@example.org'], 'no injected recipient')
  assert.equal(mailed.mail.bcc, undefined)
  assert.equal(mailed.mail.subject, 'Re: Hello Bcc: mallory@evil.test')
  assert.doesNotMatch(mailed.raw.toString('latin1'), /^Bcc:/im)
})

forEachDialect(
  'mail to a group invite joins the group; later posts are mailed, its history is not',
  async (t, dialect) => {
    const bridge = await startMailBridge(t, dialect)
    const { chat: group } = await bridge.owner.ok('create_chat', { type: 2, name: 'Tenants', members: [] })
    await bridge.owner.ok('send_message', { chat_id: group.id, content: 'Written before anyone mailed' })
    const { code } = await bridge.owner.ok('create_invite', { kind: 'group', chat_id: group.id })

    const reply = await deliver(bridge, { to: `${code}@${BRIDGE_DOMAIN}`, text: 'Hello group' })
    await bridge.owner.ok('send_message', { chat_id: group.id, content: 'Welcome to the group' })

    assert.equal(reply.code, 250, reply.text)
    const [message] = await emailMessages(bridge.owner)
    assert.equal(message?.chat_id, group.id)
    assert.equal(message?.content, 'Hello group')
    await until(() => bridge.sink.received.length > 0, 'the post mailed to the group guest')
    assert.equal(bridge.sink.received.length, 1)
    assert.match(bridge.sink.received[0]!.mail.text ?? '', /Welcome to the group/)
    assert.equal(bridge.sink.received[0]!.mail.from?.value[0]?.address, `${code}@${BRIDGE_DOMAIN}`)
  },
)
