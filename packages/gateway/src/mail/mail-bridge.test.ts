import assert from 'node:assert/strict'
import test from 'node:test'
import { ChatMessFlags } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { createTransport } from 'nodemailer'
import {
  BRIDGE_DOMAIN,
  composeMail,
  deliver,
  emailMessages,
  finalReply,
  senderDomain,
  smtpSend,
  startMailBridge,
} from '../../test/mail-peers.ts'
import { SERVICE_SECRET } from '../../test/support.ts'
import { createTestCertificate } from '../../test/tls.ts'
import { loadGatewayConfig } from '../config.ts'

forEachDialect(
  'a DKIM-signed mail to an invite code lands in that guest conversation with the Email flag',
  async (t, dialect) => {
    const bridge = await startMailBridge(t, dialect)

    const reply = await deliver(bridge, { text: 'Hi, is the flat still free?' })

    assert.equal(reply.code, 250, reply.text)
    const [message, ...rest] = await emailMessages(bridge.owner)
    assert.equal(rest.length, 0)
    assert.equal(message?.content, 'Hi, is the flat still free?')
    assert.equal(message!.flags & ChatMessFlags.Email, ChatMessFlags.Email)
    assert.notEqual(message!.owner, String(bridge.crmId))
    const chat = await bridge.owner.read('get_chat_info', { chat_id: message!.chat_id })
    assert.equal(chat.name, 'Alice Sender', 'a private chat is named for the other person: the mail sender')

    // A second mail from the same address, outside any thread, joins the same conversation.
    assert.equal((await deliver(bridge, { text: 'Hello again' })).code, 250)
    const both = await emailMessages(bridge.owner)
    assert.deepEqual(
      both.map((m) => [m.chat_id, m.owner, m.content]),
      [
        [message!.chat_id, message!.owner, 'Hi, is the flat still free?'],
        [message!.chat_id, message!.owner, 'Hello again'],
      ],
    )
  },
)

forEachDialect(
  'mail that fails authentication or the rules is refused at SMTP time and nothing is stored',
  async (t, dialect) => {
    const bridge = await startMailBridge(t, dialect, { bridge: { MaxBytes: 4096 } })
    const to = `${bridge.code}@${BRIDGE_DOMAIN}`
    const signed = await composeMail(
      { from: 'alice@example.org', to, subject: 'Question', text: 'Original body' },
      bridge.sender,
    )
    const tamper = (from: string, into: string) => {
      const text = signed.toString('latin1')
      assert.ok(text.includes(from), `the signed mail holds ${from}`)
      return Buffer.from(text.replace(from, into), 'latin1')
    }
    const send = async (raw: Buffer, from = 'alice@example.org', rcpt = to) =>
      finalReply(await smtpSend(bridge.port, { from, to: [rcpt] }, raw))

    const cases: [string, () => Promise<{ code: number; text: string }>, number, RegExp][] = [
      ['body tampered', () => send(tamper('Original body', 'Tampered body')), 550, /^5\.7\.20 .*body hash/i],
      ['header tampered', () => send(tamper('Subject: Question', 'Subject: Questiom')), 550, /^5\.7\.20 /],
      [
        'signed by another domain (wrong d=)',
        async () =>
          send(await composeMail({ from: 'alice@example.org', to }, { ...bridge.other, domain: 'other.test' })),
        550,
        /^5\.7\.22 DKIM d=other\.test is not aligned with the From: domain example\.org/,
      ],
      [
        'From: a subdomain of the signer (strict alignment)',
        async () =>
          send(await composeMail({ from: 'alice@mail.example.org', to }, bridge.sender), 'alice@mail.example.org'),
        550,
        /^5\.7\.22 DKIM d=example\.org is not aligned with the From: domain mail\.example\.org/,
      ],
      [
        'no signature and SPF -all',
        async () => send(await composeMail({ from: 'alice@example.org', to })),
        550,
        /^5\.7\.20 No DKIM signature of example\.org, and SPF for alice@example\.org is fail/,
      ],
      [
        'oversized',
        async () => send(await composeMail({ from: 'alice@example.org', to, text: 'x'.repeat(6000) }, bridge.sender)),
        552,
        /^5\.3\.4 /,
      ],
      [
        'a loop (our own X-Loop)',
        async () =>
          send(
            await composeMail({ from: 'alice@example.org', to, headers: { 'X-Loop': BRIDGE_DOMAIN } }, bridge.sender),
          ),
        554,
        /^5\.4\.6 /,
      ],
      [
        'NUL in the text',
        async () => send(await composeMail({ from: 'alice@example.org', to, text: 'a\u0000b' }, bridge.sender)),
        550,
        /^5\.6\.0 /,
      ],
      [
        'an unknown invite code (RCPT)',
        async () => send(signed, 'alice@example.org', `Nosuchcode1@${BRIDGE_DOMAIN}`),
        550,
        /^5\.1\.1 /,
      ],
      [
        'an unknown user id (RCPT)',
        async () => send(signed, 'alice@example.org', `999999@${BRIDGE_DOMAIN}`),
        550,
        /^5\.1\.1 /,
      ],
      [
        'a second From: header (its reader would pick one, the verifier the other)',
        () => send(Buffer.concat([Buffer.from('From: bob@evil.test\r\n'), signed])),
        550,
        /^5\.7\.1 The message needs exactly one From: address/,
      ],
      [
        'another domain (relay)',
        async () => send(signed, 'alice@example.org', 'bob@elsewhere.test'),
        550,
        /^5\.7\.1 Relaying denied/,
      ],
    ]
    for (const [name, attempt, code, text] of cases) {
      const reply = await attempt()
      assert.equal(reply.code, code, `${name}: ${reply.text}`)
      assert.match(reply.text, text, name)
    }
    // The untouched message passes, so each refusal above came from what its case changed.
    assert.equal((await send(signed)).code, 250)
    assert.deepEqual(
      (await emailMessages(bridge.owner)).map((m) => m.content),
      ['Original body'],
    )
  },
)

forEachDialect('without a signature, an SPF pass for the From: domain is enough', async (t, dialect) => {
  const bridge = await startMailBridge(t, dialect, { zone: [['spf.example', [['v=spf1 ip4:127.0.0.1 -all']]]] })

  const reply = await deliver(
    bridge,
    { from: 'Sam <sam@spf.example>', text: 'Sent from a server SPF allows' },
    undefined,
  )

  assert.equal(reply.code, 250, reply.text)
  assert.deepEqual(
    (await emailMessages(bridge.owner)).map((m) => m.content),
    ['Sent from a server SPF allows'],
  )
  assert.ok(bridge.dns.queries.includes('spf.example'), 'the SPF record was asked of the local DNS peer')
})

forEachDialect('an SPF pass for a MAIL FROM outside the From: domain vouches for nothing', async (t, dialect) => {
  const bridge = await startMailBridge(t, dialect, { zone: [['spf.example', [['v=spf1 ip4:127.0.0.1 -all']]]] })
  const to = `${bridge.code}@${BRIDGE_DOMAIN}`
  const send = async (from: string, text: string) =>
    finalReply(
      await smtpSend(bridge.port, { from: 'sam@spf.example', to: [to] }, await composeMail({ from, to, text })),
    )

  const forged = await send('Alice Sender <alice@example.org>', 'Pretending to be Alice')
  // The same envelope is enough for mail in its own domain: only the alignment made the difference.
  const aligned = await send('Sam <sam@spf.example>', 'Sam in his own name')

  assert.equal(forged.code, 550, forged.text)
  assert.match(forged.text, /^5\.7\.20 No DKIM signature of example\.org, and MAIL FROM is not in example\.org/)
  assert.equal(aligned.code, 250, aligned.text)
  assert.deepEqual(
    (await emailMessages(bridge.owner)).map((m) => m.content),
    ['Sam in his own name'],
  )
})

forEachDialect('auto-replies and bounces are accepted but neither stored nor answered', async (t, dialect) => {
  const bridge = await startMailBridge(t, dialect)
  const to = `${bridge.code}@${BRIDGE_DOMAIN}`

  const auto = await deliver(bridge, { text: 'I am on holiday', headers: { 'Auto-Submitted': 'auto-replied' } })
  const bounceRaw = await composeMail({ from: 'MAILER-DAEMON@example.org', to, text: 'Delivery failed' }, bridge.sender)
  const bounce = finalReply(await smtpSend(bridge.port, { from: '', to: [to] }, bounceRaw))
  const human = await deliver(bridge, { text: 'A person', headers: { 'Auto-Submitted': 'no' } })

  assert.equal(auto.code, 250, auto.text)
  assert.match(auto.text, /^2\.6\.0 /)
  assert.equal(bounce.code, 250, bounce.text)
  assert.match(bounce.text, /^2\.6\.0 /)
  assert.equal(human.code, 250, human.text)
  assert.deepEqual(
    (await emailMessages(bridge.owner)).map((m) => m.content),
    ['A person'],
  )
})

forEachDialect('a sender over its hourly limit is told to come back later at MAIL FROM', async (t, dialect) => {
  const bridge = await startMailBridge(t, dialect, { bridge: { PerSenderPerHour: 2 } })

  const replies = [await deliver(bridge, { text: 'one' }), await deliver(bridge, { text: 'two' })]
  const third = await deliver(bridge, { text: 'three' })
  const otherSender = await deliver(bridge, { from: 'bob@example.org', text: 'from bob' })

  assert.deepEqual(
    replies.map((r) => r.code),
    [250, 250],
  )
  assert.equal(third.code, 450)
  assert.match(third.text, /^4\.7\.1 /)
  assert.equal(otherSender.code, 250, 'the limit is per sender')
  assert.deepEqual(
    (await emailMessages(bridge.owner)).map((m) => m.content),
    ['one', 'two', 'from bob'],
  )
})

forEachDialect('a retried delivery of one Message-ID is stored once', async (t, dialect) => {
  const bridge = await startMailBridge(t, dialect)
  const fields = { text: 'Only once', messageId: '<retry-1@example.org>' }

  assert.equal((await deliver(bridge, fields)).code, 250)
  assert.equal((await deliver(bridge, fields)).code, 250)

  assert.deepEqual(
    (await emailMessages(bridge.owner)).map((m) => m.content),
    ['Only once'],
  )
})

forEachDialect("a CRM user's address reaches a chat with that user", async (t, dialect) => {
  const bridge = await startMailBridge(t, dialect)

  const reply = await deliver(bridge, { to: `${bridge.crmId}@${BRIDGE_DOMAIN}`, text: 'Dear Olga' })

  assert.equal(reply.code, 250, reply.text)
  const [message] = await emailMessages(bridge.owner)
  assert.equal(message?.content, 'Dear Olga')
  const chat = await bridge.owner.read('get_chat_info', { chat_id: message!.chat_id })
  assert.equal(chat.type, 1, 'a private chat between the user and the sender')
  assert.equal(chat.peer, message!.owner)
})

forEachDialect("mail arrives over STARTTLS with the gateway's certificate", async (t, dialect) => {
  const certificate = await createTestCertificate(t)
  const bridge = await startMailBridge(t, dialect, {
    gateway: { Tls: { CertFile: certificate.certFile, KeyFile: certificate.keyFile } },
  })
  const to = `${bridge.code}@${BRIDGE_DOMAIN}`
  const raw = await composeMail({ from: 'alice@example.org', to, text: 'Sent encrypted' }, bridge.sender)
  // requireTLS: the client refuses to send unless STARTTLS succeeds with a certificate it trusts.
  const client = createTransport({
    host: '127.0.0.1',
    port: bridge.port,
    requireTLS: true,
    tls: { ca: certificate.cert, servername: 'localhost' },
  })

  const info = await client.sendMail({ envelope: { from: 'alice@example.org', to: [to] }, raw })

  assert.match(info.response, /^250 /)
  assert.deepEqual(
    (await emailMessages(bridge.owner)).map((m) => m.content),
    ['Sent encrypted'],
  )
  const plain = await smtpSend(bridge.port, { from: 'alice@example.org', to: [] }, undefined)
  assert.match(plain[1]!.text, /STARTTLS/, 'EHLO offers STARTTLS')
})

forEachDialect('without a certificate the bridge offers no STARTTLS and no AUTH', async (t, dialect) => {
  const bridge = await startMailBridge(t, dialect)

  const [, ehlo] = await smtpSend(bridge.port, { from: 'alice@example.org', to: [] }, undefined)

  assert.equal(ehlo?.code, 250)
  assert.doesNotMatch(ehlo!.text, /STARTTLS|AUTH/)
  assert.match(ehlo!.text, /SIZE 1048576/)
})

forEachDialect('a DNS failure while fetching the DKIM key is a temporary refusal', async (t, dialect) => {
  const flaky = senderDomain('flaky.test')
  const bridge = await startMailBridge(t, dialect, { zone: [[flaky.record[0], 'servfail']] })

  const reply = await deliver(bridge, { from: 'carol@flaky.test', text: 'Try me later' }, flaky)

  assert.equal(reply.code, 451, reply.text)
  assert.match(reply.text, /^4\.7\.5 /)
  assert.deepEqual(await emailMessages(bridge.owner), [])
})

forEachDialect('one mail to two bridge addresses becomes a message in each chat', async (t, dialect) => {
  const bridge = await startMailBridge(t, dialect)
  const to = [`${bridge.code}@${BRIDGE_DOMAIN}`, `${bridge.crmId}@${BRIDGE_DOMAIN}`]
  const raw = await composeMail({ from: 'alice@example.org', to: to.join(', '), text: 'To you both' }, bridge.sender)

  const reply = finalReply(await smtpSend(bridge.port, { from: 'alice@example.org', to }, raw))

  assert.equal(reply.code, 250, reply.text)
  const messages = await emailMessages(bridge.owner)
  assert.deepEqual(
    messages.map((m) => m.content),
    ['To you both', 'To you both'],
  )
  assert.notEqual(messages[0]!.chat_id, messages[1]!.chat_id, 'the invite and the user address are two conversations')
})

forEachDialect('a display name with NUL and CR LF is stored as one clean line', async (t, dialect) => {
  const bridge = await startMailBridge(t, dialect)

  const reply = await deliver(bridge, {
    from: { name: 'Eve\u0000\r\nBcc: x@evil.test', address: 'eve@example.org' },
    text: 'Hi',
  })

  assert.equal(reply.code, 250, reply.text)
  const [message] = await emailMessages(bridge.owner)
  const chat = await bridge.owner.read('get_chat_info', { chat_id: message!.chat_id })
  assert.equal(chat.name, 'Eve Bcc: x@evil.test')
})

test('the bridge is off by default and needs the chat module when on', () => {
  const base = { ServiceSecret: SERVICE_SECRET }
  assert.equal(loadGatewayConfig(base, {}).MailBridge.Enabled, false)
  assert.equal(loadGatewayConfig(base, {}).MailBridge.Port, 2525)
  assert.throws(
    () => loadGatewayConfig({ ...base, MailBridge: { Enabled: true } }, {}),
    /MailBridge\.Enabled: needs Modules\.chat/,
  )
})

forEachDialect(
  'recipients past MaxRecipients are refused with 452, the first ones still get the mail',
  async (t, dialect) => {
    const bridge = await startMailBridge(t, dialect, { bridge: { MaxRecipients: 1 } })
    const to = [`${bridge.code}@${BRIDGE_DOMAIN}`, `${bridge.crmId}@${BRIDGE_DOMAIN}`]
    const raw = await composeMail({ from: 'alice@example.org', to: to.join(', '), text: 'Two of you' }, bridge.sender)

    const replies = await smtpSend(bridge.port, { from: 'alice@example.org', to }, raw)

    assert.deepEqual(
      replies.slice(3, 5).map((reply) => reply.code),
      [250, 452],
    )
    assert.equal(replies.at(-1)?.code, 250)
    assert.deepEqual(
      (await emailMessages(bridge.owner)).map((m) => m.content),
      ['Two of you'],
    )
  },
)

forEachDialect(
  'a message with more DKIM signatures than five is refused before any key is looked up',
  async (t, dialect) => {
    const bridge = await startMailBridge(t, dialect)
    const to = `${bridge.code}@${BRIDGE_DOMAIN}`
    const signed = await composeMail({ from: 'alice@example.org', to, text: 'Many signatures' }, bridge.sender)
    const extra = Array.from(
      { length: 5 },
      (_, i) =>
        `DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.org; s=extra${i}; h=from; bh=AAAA; b=AAAA\r\n`,
    ).join('')
    const queriesBefore = bridge.dns.queries.length

    const reply = finalReply(
      await smtpSend(bridge.port, { from: 'alice@example.org', to: [to] }, Buffer.concat([Buffer.from(extra), signed])),
    )

    assert.equal(reply.code, 550, reply.text)
    assert.match(reply.text, /^5\.7\.1 More than 5 DKIM signatures/)
    assert.equal(bridge.dns.queries.length, queriesBefore, 'no DNS lookup was made')
    assert.deepEqual(await emailMessages(bridge.owner), [])
  },
)
