import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readdir } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buffer } from 'node:stream/consumers'
import test from 'node:test'
import { ChatMessFlags } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import {
  BRIDGE_DOMAIN,
  type BridgeOptions,
  composeMail,
  deliver,
  emailMessages,
  finalReply,
  type MailFields,
  smtpSend,
  startMailBridge,
} from '../../test/mail-peers.ts'
import { signedInUser } from '../../test/support.ts'
import { createFileCatalogClient } from '../files/file-catalog-client.ts'
import { ATTACH_GRACE_MS, sweepFiles } from '../files/upload-sweep.ts'
import { createUploads } from '../files/uploads.repository.ts'
import { createModuleInstances } from '../proxy/module-instances.ts'
import { mailFileName } from './mail-files.ts'

interface FileView {
  id: string
  name: string
  size: number
  type: string
}

/**
 * A mail bridge whose invite belongs to a signed-in gateway user (so they can download), with
 * readers of what the file service holds: its upload rows and the bytes in its storage.
 */
async function startBridge(
  t: test.TestContext,
  dialect: Parameters<typeof startMailBridge>[1],
  options?: BridgeOptions,
) {
  const bridge = await startMailBridge(t, dialect, options)
  const { gateway } = bridge
  const member = gateway.user
  const memberChat = bridge.chat.user(member.crmId)
  const { code } = await memberChat.ok('create_invite', { kind: 'personal' })
  const { 'Content-Type': _json, ...credentials } = member.headers
  return {
    ...bridge,
    member,
    memberChat,
    send: (fields: Partial<MailFields>) => deliver(bridge, { to: `${code}@${BRIDGE_DOMAIN}`, ...fields }),
    uploadRows: () => gateway.store.db.selectFrom('uploads').selectAll().orderBy('id').execute(),
    /** Every object (or file) the storage holds, and S3's unfinished multipart uploads. */
    async storedKeys(): Promise<string[]> {
      if (!gateway.s3) return readdir(gateway.directory)
      return [...(await gateway.s3.keys()), ...(await gateway.s3.multipartUploads())]
    },
    download: (path: string, headers = credentials) => fetch(`${gateway.url}${path}`, { headers }),
  }
}

type Bridge = Awaited<ReturnType<typeof startBridge>>

/** The member's email messages, oldest first, and the files among them. */
async function received(bridge: Bridge) {
  const messages = (await emailMessages(bridge.memberChat)) as unknown as {
    id: string
    chat_id: string
    content: string
    flags: number
    file: FileView | null
  }[]
  return { messages, files: messages.flatMap((message) => (message.file ? [message.file] : [])) }
}

async function assertNothingStored(bridge: Bridge, what: string) {
  assert.deepEqual(await bridge.uploadRows(), [], `${what}: no file rows`)
  assert.deepEqual(await bridge.storedKeys(), [], `${what}: no bytes in the storage`)
  assert.deepEqual((await received(bridge)).messages, [], `${what}: nothing in the chat`)
}

test('attachment names are one clean line without path separators, at most 255 characters', () => {
  assert.equal(mailFileName('reports/2026\\q3.pdf', 0, 'application/pdf'), 'reports_2026_q3.pdf')
  assert.equal(mailFileName('a\u0000b\r\nc.txt', 0, 'text/plain'), 'a b c.txt')
  assert.equal(mailFileName('ä'.repeat(300), 0, 'text/plain'), 'ä'.repeat(255))
  assert.equal(
    mailFileName(`${'ä'.repeat(300)}.docx`, 0, 'text/plain'),
    `${'ä'.repeat(250)}.docx`,
    'keeps the extension',
  )
  assert.equal(mailFileName('😀'.repeat(300), 0, 'text/plain').length, 2 * 255, 'whole code points')
  assert.equal(mailFileName('..', 2, 'text/plain'), 'attachment-3')
  assert.equal(mailFileName(undefined, 0, 'message/rfc822'), 'attachment-1.eml')
})

forEachDialect("a mail's attachments land as file messages, downloadable by the chat's members", async (t, dialect) => {
  const bridge = await startBridge(t, dialect)
  const pdf = randomBytes(3000)
  const longName = `Überblick\u0000März ${'ä'.repeat(300)}.txt`
  const text = Buffer.from('Grüße\n')
  const reply = await bridge.send({
    text: 'See the files',
    attachments: [
      { filename: 'reports/2026\\q3.pdf', content: pdf, contentType: 'application/pdf' },
      { filename: longName, content: text, contentType: 'text/plain; charset=utf-8' },
    ],
  })
  assert.equal(reply.code, 250, reply.text)

  const { messages, files } = await received(bridge)
  assert.deepEqual(
    messages.map((message) => [message.content, message.flags]),
    [
      ['See the files', ChatMessFlags.Email],
      ['', ChatMessFlags.Email | ChatMessFlags.File],
      ['', ChatMessFlags.Email | ChatMessFlags.File],
    ],
  )
  assert.deepEqual(
    files.map(({ name, size, type }) => ({ name, size, type })),
    [
      { name: 'reports_2026_q3.pdf', size: pdf.length, type: 'application/pdf' },
      // NUL became a space; cut to 255 characters, keeping the extension.
      { name: `Überblick März ${'ä'.repeat(255 - 15 - 4)}.txt`, size: text.length, type: 'text/plain' },
    ],
  )

  // Stored as uploads are: counted against the invite's owner, attached, bytes in the storage.
  const rows = await bridge.uploadRows()
  assert.deepEqual(
    rows.map((row) => [String(row.id), row.crm_id, row.state, row.upload_offset]),
    files.map((file) => [file.id, bridge.member.crmId, 'attached', file.size]),
  )
  assert.deepEqual((await bridge.storedKeys()).sort(), rows.map((row) => row.storage_key).sort())

  // The normal download paths: by file id and by message, with the bytes that were sent.
  const sent = [pdf, text]
  for (const [index, file] of files.entries()) {
    const byId = await bridge.download(`/auth/v1/file/${file.id}`)
    assert.equal(byId.status, 200)
    assert.deepEqual(Buffer.from(await byId.arrayBuffer()), sent[index])
    assert.equal(byId.headers.get('content-type'), file.type)
    const message = messages.find((m) => m.file?.id === file.id)!
    const byMessage = await bridge.download(`/auth/v2/file/${message.id}`)
    assert.deepEqual(Buffer.from(await byMessage.arrayBuffer()), sent[index])
  }
  // Someone who is not in the chat cannot read them.
  const { 'Content-Type': _json, ...otherHeaders } = (await signedInUser(bridge.gateway)).headers
  assert.equal((await bridge.download(`/auth/v1/file/${files[0]!.id}`, otherHeaders)).status, 404)

  // The chat's file browser lists them.
  const browser = await bridge.memberChat.read('get_chat_files', { chat_id: messages[0]!.chat_id })
  assert.deepEqual(
    (browser.files as { file: FileView }[]).map((entry) => entry.file.id).sort(),
    files.map((file) => file.id).sort(),
  )
})

forEachDialect('attachments over the limits are refused at SMTP time and nothing is stored', async (t, dialect) => {
  const bridge = await startBridge(t, dialect, {
    bridge: { MaxAttachments: 2, MaxAttachmentBytes: 3000 },
    gateway: { Files: { MaxFileSize: 2000, DeniedContentTypes: ['application/x-msdownload'], QuotaBytes: 2500 } },
  })
  const file = (size: number, filename = 'f.bin') => ({ filename, content: randomBytes(size) })
  const cases: [string, MailFields['attachments'], number, RegExp][] = [
    [
      'one file over Files.MaxFileSize',
      [file(2001, 'big.bin')],
      552,
      /^5\.3\.4 The attachment "big\.bin" is too large/,
    ],
    ['more than MaxAttachments', [file(10), file(10), file(10)], 552, /^5\.3\.4 The message has 3 attachments/],
    ['more than MaxAttachmentBytes together', [file(1500), file(1501)], 552, /^5\.3\.4 .*3000 bytes together/],
    [
      'a denied type',
      [{ filename: 'setup.exe', content: 'MZ', contentType: 'application/x-msdownload' }],
      550,
      /^5\.6\.1 /,
    ],
    // The first file fits the quota, the second does not: the first is removed again.
    ['over the owner’s quota', [file(1500), file(1100)], 452, /^4\.2\.2 /],
  ]
  for (const [name, attachments, code, text] of cases) {
    const reply = await bridge.send({ text: name, attachments })
    assert.equal(reply.code, code, `${name}: ${reply.text}`)
    assert.match(reply.text, text, name)
    await assertNothingStored(bridge, name)
  }
  // Within every limit the same kind of mail is taken, so each refusal came from its own limit.
  const reply = await bridge.send({ text: 'fits', attachments: [file(1500), file(900)] })
  assert.equal(reply.code, 250, reply.text)
  assert.equal((await bridge.uploadRows()).length, 2)
})

forEachDialect('a storage failure midway leaves no file and no message, and the retry lands', async (t, dialect) => {
  const bridge = await startBridge(t, dialect, { backend: 's3' })
  const s3 = bridge.gateway.s3!
  // The object of the second file cannot be written: the first one is complete by then.
  let objects = 0
  s3.refuse(
    (request) => request.method === 'PUT' && !request.query.partNumber && !request.key.includes('.') && ++objects === 2,
  )
  const mail = {
    text: 'Two files',
    messageId: '<storage-failure@example.org>',
    attachments: [
      { filename: 'one.txt', content: 'first file' },
      { filename: 'two.txt', content: 'second file' },
    ],
  }
  const reply = await bridge.send(mail)
  assert.equal(reply.code, 451, reply.text)
  assert.equal(objects, 2, 'the second object was refused')
  await assertNothingStored(bridge, 'a storage failure')

  s3.refuse(undefined)
  assert.equal((await bridge.send(mail)).code, 250)
  const { files } = await received(bridge)
  assert.deepEqual(
    files.map((file) => file.name),
    ['one.txt', 'two.txt'],
  )
  const bytes = await Promise.all(files.map(async (file) => (await bridge.download(`/auth/v1/file/${file.id}`)).text()))
  assert.deepEqual(bytes, ['first file', 'second file'])
})

forEachDialect('files of a mail the chat module refuses, or has already, are removed again', async (t, dialect) => {
  const bridge = await startBridge(t, dialect)
  const attachments = [{ filename: 'a.txt', content: 'attached' }]

  const tooLong = await bridge.send({ text: 'x'.repeat(16_385), attachments })
  assert.equal(tooLong.code, 552, tooLong.text)
  await assertNothingStored(bridge, 'text too long for a chat')

  const mail = { text: 'Once', messageId: '<once@example.org>', attachments }
  assert.equal((await bridge.send(mail)).code, 250)
  const first = await bridge.uploadRows()
  // The sender's server retries (it missed our 250): stored once, the retry's file removed.
  assert.equal((await bridge.send(mail)).code, 250)
  assert.deepEqual(await bridge.uploadRows(), first)
  assert.deepEqual(await bridge.storedKeys(), [first[0]!.storage_key])
  assert.equal((await received(bridge)).files.length, 1)
})

forEachDialect('inline pictures and attached messages are files of the mail too', async (t, dialect) => {
  const bridge = await startBridge(t, dialect)
  const png = randomBytes(64)
  const forwarded = Buffer.from('From: bob@example.net\r\nSubject: Earlier\r\n\r\nThe earlier mail\r\n')
  const reply = await bridge.send({
    text: 'Look at this',
    html: '<p>Look at this <img src="cid:shot@example.org"></p>',
    attachments: [
      { filename: 'shot.png', content: png, contentType: 'image/png', cid: 'shot@example.org' },
      { content: forwarded, contentType: 'message/rfc822', contentDisposition: 'attachment' },
    ],
  })
  assert.equal(reply.code, 250, reply.text)
  const { files } = await received(bridge)
  assert.deepEqual(
    files.map(({ name, type, size }) => ({ name, type, size })),
    [
      { name: 'shot.png', type: 'image/png', size: png.length },
      { name: 'attachment-2.eml', type: 'message/rfc822', size: forwarded.length },
    ],
  )
  // The bytes as the storage holds them (test one downloads files over HTTP).
  const rows = await bridge.uploadRows()
  assert.deepEqual(await buffer(await bridge.gateway.storage.open(rows[0]!.storage_key)), png)
  assert.deepEqual(await buffer(await bridge.gateway.storage.open(rows[1]!.storage_key)), forwarded)
})

forEachDialect('one mail to two addresses stores its files once, named in both chats', async (t, dialect) => {
  const bridge = await startBridge(t, dialect)
  const { code } = await bridge.memberChat.ok('create_invite', { kind: 'personal' })
  const to = [`${code}@${BRIDGE_DOMAIN}`, `${bridge.code}@${BRIDGE_DOMAIN}`]
  const raw = await composeMail(
    { from: 'alice@example.org', to: to.join(', '), attachments: [{ filename: 'both.txt', content: 'for both' }] },
    bridge.sender,
  )
  const reply = finalReply(await smtpSend(bridge.port, { from: 'alice@example.org', to }, raw))
  assert.equal(reply.code, 250, reply.text)

  const rows = await bridge.uploadRows()
  assert.equal(rows.length, 1, 'the bytes are stored once')
  assert.equal(rows[0]!.crm_id, bridge.member.crmId, "counted against the first address's owner")
  const mine = (await received(bridge)).files
  const theirs = (await emailMessages(bridge.owner)).flatMap((m) => ((m as { file?: FileView }).file ? [m] : []))
  assert.deepEqual(
    [mine.map((file) => file.id), theirs.map((m) => (m as unknown as { file: FileView }).file.id)],
    [[String(rows[0]!.id)], [String(rows[0]!.id)]],
  )
})

/**
 * A front of the chat module that forwards every call, except that ReceiveEmail's answer can be
 * lost: `before` drops the connection without forwarding, `after` forwards (the chat module
 * stores the mail) and then drops it, as a timeout would.
 */
async function lossyFront(t: test.TestContext, chatBase: string) {
  const state: { lose?: 'before' | 'after' } = {}
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const lose = request.url?.endsWith('/ReceiveEmail') ? state.lose : undefined
    if (lose === 'before') return request.socket.destroy()
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
    ) as Record<string, string>
    const answer = await fetch(`${chatBase}${request.url}`, {
      method: request.method,
      headers,
      ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
    })
    const body = Buffer.from(await answer.arrayBuffer())
    if (lose === 'after') return request.socket.destroy()
    response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' })
    response.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    server.closeAllConnections()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, state }
}

forEachDialect("when the chat module's answer is lost, the file sweep settles the files", async (t, dialect) => {
  let front: Awaited<ReturnType<typeof lossyFront>> | undefined
  const bridge = await startBridge(t, dialect, {
    chatFront: async (base) => {
      front = await lossyFront(t, base)
      return front.url
    },
  })
  const { gateway } = bridge
  const later = () => Date.now() + gateway.config.Files.ExpirySeconds * 1000 + ATTACH_GRACE_MS + 1000
  const sweep = () =>
    sweepFiles({
      uploads: createUploads(gateway.store.db, dialect, gateway.store.nextTick, later),
      storage: gateway.storage,
      catalog: createFileCatalogClient({
        instances: createModuleInstances('chat', [bridge.chat.base], { backoffMs: 1000 }),
        serviceSecret: gateway.config.ServiceSecret,
      }),
      now: later,
    })
  const attachments = [{ filename: 'lost.txt', content: 'the answer got lost' }]

  // Not stored by the chat module: the file waits, unattached, and the sweep removes it.
  front!.state.lose = 'before'
  const lost = await bridge.send({ text: 'first', messageId: '<lost@example.org>', attachments })
  assert.equal(lost.code, 451, lost.text)
  assert.deepEqual(
    (await bridge.uploadRows()).map((row) => row.state),
    ['finished'],
    'kept: the chat module might have stored it',
  )
  assert.deepEqual((await sweep()).unattached, 1)
  await assertNothingStored(bridge, 'a mail the chat module never saw')

  // Stored by the chat module, answer lost: the sweep finds the message naming the file and keeps it.
  front!.state.lose = 'after'
  const stored = await bridge.send({ text: 'second', messageId: '<stored@example.org>', attachments })
  assert.equal(stored.code, 451, stored.text)
  assert.equal((await sweep()).unattached, 0)
  const rows = await bridge.uploadRows()
  assert.deepEqual(
    rows.map((row) => row.state),
    ['attached'],
  )
  const { files } = await received(bridge)
  assert.deepEqual(
    files.map((file) => file.id),
    [String(rows[0]!.id)],
  )
})
