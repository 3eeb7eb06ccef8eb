import assert from 'node:assert/strict'
import { ChatMessFlags, signFileToken } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { startFileService } from '../../test/files.ts'
import { createClock } from '../../test/support.ts'
import { createUpload, forEachStorage, testBytes, tusHeaders } from '../../test/uploads.ts'
import { ATTACH_GRACE_MS } from './upload-sweep.ts'

forEachDialect('a finished upload is attached by send_message and listed by get_chat_files', async (t, dialect) => {
  const files = await startFileService(t, dialect)
  const { alice, bob } = files
  const chatId = await files.group(alice, [bob])
  const bytes = testBytes(3000)
  const { id, token } = await files.upload(alice, bytes, 'Q3 report.pdf', 'application/pdf')

  const sent = await files.ok(alice, 'send_message', { chat_id: chatId, content: 'the report', file: token })
  assert.deepEqual(sent.file, { id, name: 'Q3 report.pdf', size: 3000, type: 'application/pdf' })
  assert.equal(sent.flags & ChatMessFlags.File, ChatMessFlags.File)
  assert.equal(sent.content, 'the report')

  // Bob, a member, sees it in the feed and downloads exactly the bytes Alice sent.
  const page = await files.ok(bob, `get_chat_messages?chat_id=${chatId}`)
  assert.deepEqual(page.messages[0].file, sent.file)
  const got = await files.download(`/auth/v1/file/${id}`, bob)
  assert.equal(got.status, 200)
  assert.deepEqual(Buffer.from(await got.arrayBuffer()), bytes)

  // Two more files, then pages of two, newest first.
  const second = await files.sendFile(alice, chatId, testBytes(10, 1), 'b.txt')
  await files.ok(bob, 'send_message', { chat_id: chatId, content: 'not a file' })
  const third = await files.sendFile(bob, chatId, testBytes(20, 2), 'c.txt')
  const first = await files.ok(bob, `get_chat_files?chat_id=${chatId}&limit=2`)
  assert.deepEqual(
    first.files.map((message: { id: string }) => message.id),
    [third.id, second.id],
  )
  assert.equal(first.has_more, true)
  const rest = await files.ok(bob, `get_chat_files?chat_id=${chatId}&limit=2&before=${second.id}`)
  assert.deepEqual(
    rest.files.map((message: { id: string }) => message.id),
    [sent.id],
  )
  assert.equal(rest.has_more, false)
})

forEachDialect(
  'send_message refuses file tokens that are not the sender’s own, fresh and genuine',
  async (t, dialect) => {
    // The gateway's clock runs two days behind: each token it signs has expired by the chat's clock.
    const behind = createClock(Date.now() - 2 * 86_400_000)
    const files = await startFileService(t, dialect)
    const late = await startFileService(t, dialect, { now: behind.now })
    const { alice, bob } = files
    const chatId = await files.group(alice, [bob])
    const { token, id } = await files.upload(alice, testBytes(100))

    const refusals: [string, object, number, number][] = [
      ['another user’s token', { user: bob, file: token }, 403, 1009],
      ['a changed token', { user: alice, file: `${token.slice(0, -2)}AA` }, 400, 3012],
      [
        'a token signed with another secret',
        {
          user: alice,
          file: signFileToken('another-secret-of-at-least-32-characters', {
            id: Number(id),
            owner: alice.crmId,
            name: 'x',
            size: 100,
            type: '',
            expires: Date.now() + 60_000,
          }),
        },
        400,
        3012,
      ],
      ['a file with a widget', { user: alice, file: token, widget: { kind: 'poll' } }, 400, 1000],
    ]
    for (const [what, { user, ...body }, status, code] of refusals as [
      string,
      { user: typeof alice },
      number,
      number,
    ][]) {
      const answer = await files.call(user, 'send_message', { chat_id: chatId, content: '', ...body })
      assert.equal(answer.status, status, what)
      assert.equal(answer.error.code, code, what)
    }

    const lateChat = await late.group(late.alice, [])
    const stale = await late.upload(late.alice, testBytes(10))
    const expired = await late.call(late.alice, 'send_message', { chat_id: lateChat, content: '', file: stale.token })
    assert.equal(expired.status, 400)
    assert.equal(expired.error.code, 3012)
    assert.match(expired.error.message, /expired/)

    // An unfinished upload has no token to give.
    const url = await createUpload(files.uploads, tusHeaders(alice), 50)
    const head = await fetch(url, { method: 'HEAD', headers: tusHeaders(alice) })
    assert.equal(head.headers.get('x-file-token'), null)

    // Nothing was posted by any refused attempt.
    const { messages } = await files.ok(alice, `get_chat_messages?chat_id=${chatId}`)
    assert.deepEqual(messages, [])
  },
)

forEachDialect('guests cannot attach files or browse them', async (t, dialect) => {
  const files = await startFileService(t, dialect)
  const { alice } = files
  const chatId = await files.group(alice, [])
  const { code } = await files.ok(alice, 'create_invite', { kind: 'group', chat_id: chatId })
  const device = { 'X-Device-Guid': 'guest-device-0001' }
  await files.ok({ headers: device }, 'join_invite', { code })
  const guest = { headers: { ...device, 'X-Invite-Code': code } }
  const { token } = await files.upload(alice, testBytes(10))

  const attach = await files.call(guest, 'send_message', { chat_id: chatId, content: '', file: token })
  assert.equal(attach.status, 403)
  assert.equal(attach.error.code, 3007)
  const browse = await files.call(guest, `get_chat_files?chat_id=${chatId}`)
  assert.equal(browse.status, 403)
  assert.equal(browse.error.code, 3007)
  const upload = await fetch(files.uploads, {
    method: 'POST',
    headers: { ...device, 'Tus-Resumable': '1.0.0', 'Upload-Length': '10' },
  })
  assert.equal(upload.status, 401)
})

forEachStorage(
  'a forward keeps the file; the bytes go when the last message naming them is hard-deleted',
  async (t, dialect, backend) => {
    const files = await startFileService(t, dialect, { backend })
    const { alice, bob } = files
    const team = await files.group(alice, [bob], 'Team')
    const elsewhere = await files.group(bob, [], 'Bob alone')
    const bytes = testBytes(500, 9)
    const original = await files.sendFile(alice, team, bytes, 'plan.txt')
    const forwarded = await files.ok(bob, 'forward_message', { message_id: original.id, to_chat_id: elsewhere })
    assert.deepEqual(forwarded.file, original.file)
    const fileUrl = `/auth/v1/file/${original.file.id}`

    await files.ok(alice, 'hard_delete_message', { message_id: original.id })
    assert.deepEqual(await files.app.sweepFiles(), { expired: 0, unattached: 0, released: 0 })
    const kept = await files.download(fileUrl, bob)
    assert.equal(kept.status, 200, 'the forward still names the file')
    assert.deepEqual(Buffer.from(await kept.arrayBuffer()), bytes)

    await files.ok(bob, 'hard_delete_message', { message_id: forwarded.id })
    assert.deepEqual(await files.app.sweepFiles(), { expired: 0, unattached: 0, released: 1 })
    assert.equal(await files.holds(`${files.uploads}/${original.file.id}`), false, 'the bytes are removed')
    assert.equal((await files.download(fileUrl, alice)).status, 404, 'not even the uploader has it now')
    assert.deepEqual(
      await files.app.sweepFiles(),
      { expired: 0, unattached: 0, released: 0 },
      'releases are acknowledged',
    )
  },
)

forEachStorage('a soft-deleted file message hides the file from members', async (t, dialect, backend) => {
  const files = await startFileService(t, dialect, { backend })
  const { alice, bob } = files
  const chatId = await files.group(alice, [bob])
  const message = await files.sendFile(alice, chatId, testBytes(64), 'secret.txt')
  const deleted = await files.ok(alice, 'soft_delete_message', { message_id: message.id })
  assert.equal(deleted.file, null)
  const listed = await files.ok(bob, `get_chat_files?chat_id=${chatId}`)
  assert.deepEqual(listed.files, [])
  for (const path of [`/auth/v1/file/${message.file.id}`, `/auth/v2/file/${message.id}`]) {
    const refused = await files.download(path, bob)
    assert.equal(refused.status, 404, path)
    assert.equal((await json(refused)).error.code, 2120)
  }
  // A soft delete keeps the bytes: the sweep does not release them.
  await files.app.sweepFiles()
  assert.equal(await files.holds(`${files.uploads}/${message.file.id}`), true)
})

forEachStorage(
  'the sweep removes finished uploads never attached and keeps attached ones',
  async (t, dialect, backend) => {
    const clock = createClock(Date.now())
    const files = await startFileService(t, dialect, {
      backend,
      now: clock.now,
      settings: { Files: { ExpirySeconds: 60 } },
    })
    const { alice } = files
    const chatId = await files.group(alice, [])
    const attached = await files.sendFile(alice, chatId, testBytes(30), 'kept.txt')
    const loose = await files.upload(alice, testBytes(40))
    const removable = await files.upload(alice, testBytes(50))

    // The composer's remove: a finished upload no message names may be terminated; an attached one not.
    const terminate = (url: string) => fetch(url, { method: 'DELETE', headers: tusHeaders(alice) })
    assert.equal((await terminate(removable.url)).status, 204)
    const refused = await terminate(`${files.uploads}/${attached.file.id}`)
    assert.equal(refused.status, 409)
    assert.equal((await json(refused)).error.code, 2121)

    assert.deepEqual(
      await files.app.sweepFiles(),
      { expired: 0, unattached: 0, released: 0 },
      'within the time to attach',
    )
    clock.advance(60_000 + ATTACH_GRACE_MS)
    assert.deepEqual(await files.app.sweepFiles(), { expired: 0, unattached: 1, released: 0 })
    assert.equal(await files.holds(loose.url), false, 'the unattached file is removed')
    assert.equal(await files.holds(`${files.uploads}/${attached.file.id}`), true, 'the attached file is kept')
    assert.equal((await files.download(`/auth/v1/file/${loose.id}`, alice)).status, 404)
    assert.equal((await files.download(`/auth/v1/file/${attached.file.id}`, alice)).status, 200)
  },
)
