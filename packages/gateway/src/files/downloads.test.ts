import assert from 'node:assert/strict'
import { test } from 'node:test'
import { forEachDialect, json } from '@atrium/platform/testing'
import { startFileService } from '../../test/files.ts'
import { forEachStorage, testBytes } from '../../test/uploads.ts'
import { contentDisposition, readRange } from './download-headers.ts'

forEachStorage(
  'a download serves exact bytes with safe headers, ETag revalidation and ranges',
  async (t, dialect, backend) => {
    const files = await startFileService(t, dialect, { backend })
    const { alice, bob } = files
    const chatId = await files.group(alice, [bob])
    const bytes = testBytes(1000, 3)
    const name = 'Résumé "final"\\v2.png'
    const message = await files.sendFile(alice, chatId, bytes, name, 'image/png')
    const path = `/auth/v1/file/${message.file.id}`

    const whole = await files.download(path, bob)
    assert.equal(whole.status, 200)
    assert.deepEqual(Buffer.from(await whole.arrayBuffer()), bytes)
    assert.equal(whole.headers.get('content-type'), 'image/png')
    assert.equal(whole.headers.get('content-length'), '1000')
    assert.equal(
      whole.headers.get('content-disposition'),
      `inline; filename="R_sum_ _final__v2.png"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%22final%22_v2.png`,
    )
    assert.equal(whole.headers.get('x-content-type-options'), 'nosniff')
    assert.equal(whole.headers.get('content-security-policy'), "default-src 'none'; sandbox")
    assert.equal(whole.headers.get('accept-ranges'), 'bytes')
    const etag = whole.headers.get('etag')!
    assert.match(etag, /^"[0-9a-z]+-[0-9a-z]+"$/)

    const notModified = await files.download(path, bob, { 'If-None-Match': etag })
    assert.equal(notModified.status, 304)
    assert.equal((await notModified.arrayBuffer()).byteLength, 0)

    const part = await files.download(path, bob, { Range: 'bytes=100-199' })
    assert.equal(part.status, 206)
    assert.equal(part.headers.get('content-range'), 'bytes 100-199/1000')
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), bytes.subarray(100, 200))
    const tail = await files.download(path, bob, { Range: 'bytes=-10' })
    assert.deepEqual(Buffer.from(await tail.arrayBuffer()), bytes.subarray(990))
    const stale = await files.download(path, bob, { Range: 'bytes=0-9', 'If-Range': '"other"' })
    assert.equal(stale.status, 200, 'If-Range with another tag gets the whole file')
    assert.equal((await stale.arrayBuffer()).byteLength, 1000)
    const beyond = await files.download(path, bob, { Range: 'bytes=1000-' })
    assert.equal(beyond.status, 416)
    assert.equal(beyond.headers.get('content-range'), 'bytes */1000')
    assert.equal((await json(beyond)).error.code, 2122)

    const head = await fetch(`${files.url}${path}`, { method: 'HEAD', headers: { Cookie: bob.headers.Cookie! } })
    assert.equal(head.status, 200)
    assert.equal(head.headers.get('content-length'), '1000')

    const forced = await files.download(`${path}?download=1`, bob)
    assert.match(forced.headers.get('content-disposition')!, /^attachment; /)
    await forced.arrayBuffer()
  },
)

forEachDialect('active and unknown types are never shown inline', async (t, dialect) => {
  const files = await startFileService(t, dialect)
  const { alice } = files
  const chatId = await files.group(alice, [])
  const cases: [string, string, string][] = [
    ['page.html', 'text/html', 'text/html'],
    ['logo.svg', 'image/svg+xml', 'image/svg+xml'],
    ['script.js', 'text/javascript', 'text/javascript'],
    ['data.xyz', 'application/x-made-up', 'application/x-made-up'],
    ['none', '', 'application/octet-stream'],
  ]
  for (const [name, declared, served] of cases) {
    const message = await files.sendFile(alice, chatId, Buffer.from('<svg onload="alert(1)"/>'), name, declared)
    const answer = await files.download(`/auth/v1/file/${message.file.id}`, alice)
    assert.equal(answer.headers.get('content-type'), served, name)
    assert.match(answer.headers.get('content-disposition')!, /^attachment; /, name)
    assert.equal(answer.headers.get('x-content-type-options'), 'nosniff')
    await answer.arrayBuffer()
  }
})

forEachDialect('every download that the reader may not make is refused alike', async (t, dialect) => {
  const files = await startFileService(t, dialect)
  const { alice, bob } = files
  const carol = await files.signedIn()
  const operator = await files.signedIn(['admin'])
  const team = await files.group(alice, [bob])
  const aliceOnly = await files.group(alice, [], 'Private notes')
  const shared = await files.sendFile(alice, team, testBytes(10), 'shared.txt')
  const hidden = await files.sendFile(alice, aliceOnly, testBytes(20), 'hidden.txt')

  const allowed: [string, string, typeof alice][] = [
    ['a member by file id', `/auth/v1/file/${shared.file.id}`, bob],
    ['a member by message id', `/auth/v2/file/${shared.id}`, bob],
    ['the uploader by file id', `/auth/v1/file/${hidden.file.id}`, alice],
    ['an operator by message id, in no chat', `/auth/v2/file/${hidden.id}`, operator],
  ]
  for (const [what, path, user] of allowed) {
    const answer = await files.download(path, user)
    assert.equal(answer.status, 200, what)
    await answer.arrayBuffer()
  }

  const refused: [string, string, typeof alice][] = [
    ['a non-member by file id', `/auth/v1/file/${shared.file.id}`, carol],
    ['a non-member by message id', `/auth/v2/file/${shared.id}`, carol],
    ['a member of another chat by file id', `/auth/v1/file/${hidden.file.id}`, bob],
    ['a member of another chat by message id', `/auth/v2/file/${hidden.id}`, bob],
    ['a message that is not a file', `/auth/v2/file/${team}`, bob],
    ['a guessed id next to a real one', `/auth/v1/file/${Number(shared.file.id) + 1}`, bob],
    ['a made-up id', '/auth/v1/file/123456789', alice],
    ['an id that is not a number', '/auth/v1/file/1e3', alice],
    ['an operator by file id of a chat they are not in', `/auth/v1/file/${hidden.file.id}`, operator],
  ]
  for (const [what, path, user] of refused) {
    const answer = await files.download(path, user)
    assert.equal(answer.status, 404, what)
    const { error } = await json(answer)
    assert.deepEqual(error, { code: 2120, message: error.message }, what)
  }

  const anonymous = await files.download(`/auth/v1/file/${shared.file.id}`)
  assert.equal(anonymous.status, 401)
  assert.equal((await json(anonymous)).error.code, 2003)
  const anonymousV2 = await files.download(`/auth/v2/file/${shared.id}`)
  assert.equal(anonymousV2.status, 401)

  // Bob leaves the team: his access ends with his membership.
  await files.ok(bob, 'leave_chat', { chat_id: team })
  assert.equal((await files.download(`/auth/v1/file/${shared.file.id}`, bob)).status, 404)
})

forEachDialect('a guest downloads by invite code and device, until the invite is revoked', async (t, dialect) => {
  const files = await startFileService(t, dialect)
  const { alice } = files
  const team = await files.group(alice, [])
  const other = await files.group(alice, [], 'Other')
  const { code } = await files.ok(alice, 'create_invite', { kind: 'group', chat_id: team })
  const device = 'guest-device-0042'
  await files.ok({ headers: { 'X-Device-Guid': device } }, 'join_invite', { code })
  const bytes = testBytes(77, 5)
  const inTeam = await files.sendFile(alice, team, bytes, 'for guests.txt')
  const inOther = await files.sendFile(alice, other, testBytes(5), 'not for guests.txt')
  const guestPath = (message: { id: string }) => `/auth/v2/file/${code}?message=${message.id}`

  const got = await files.download(guestPath(inTeam), undefined, { 'X-Device-Guid': device })
  assert.equal(got.status, 200)
  assert.deepEqual(Buffer.from(await got.arrayBuffer()), bytes)

  const refusals: [string, string, Record<string, string>, number][] = [
    ['another device', guestPath(inTeam), { 'X-Device-Guid': 'another-device-01' }, 404],
    ['a message of another chat', guestPath(inOther), { 'X-Device-Guid': device }, 404],
    ['another code', `/auth/v2/file/AAAAAAAAAAAAAAAA?message=${inTeam.id}`, { 'X-Device-Guid': device }, 404],
    ['no device header', guestPath(inTeam), {}, 400],
    ['a malformed device header', guestPath(inTeam), { 'X-Device-Guid': 'x' }, 400],
  ]
  for (const [what, path, headers, status] of refusals) {
    const answer = await files.download(path, undefined, headers)
    assert.equal(answer.status, status, what)
    await answer.arrayBuffer()
  }

  await files.ok(alice, 'revoke_invite', { code })
  const revoked = await files.download(guestPath(inTeam), undefined, { 'X-Device-Guid': device })
  assert.equal(revoked.status, 404, 'a revoked guest reads nothing')
  await revoked.arrayBuffer()
})

forEachDialect('a chat module that cannot be reached makes downloads a 502, not a refusal', async (t, dialect) => {
  // Port 9 (discard) has no listener here: every catalogue call fails to connect.
  const files = await startFileService(t, dialect, { settings: { Modules: { chat: 'http://127.0.0.1:9' } } })
  const { alice, bob } = files
  const { id } = await files.upload(alice, testBytes(10))
  const answer = await files.download(`/auth/v1/file/${id}`, bob)
  assert.equal(answer.status, 502)
  assert.equal((await json(answer)).error.code, 2000)
  // The uploader's own file needs no chat module.
  const own = await files.download(`/auth/v1/file/${id}`, alice)
  assert.equal(own.status, 200)
  await own.arrayBuffer()
})

test('Content-Disposition keeps the exact name for new clients and a safe one for old ones', () => {
  assert.equal(contentDisposition('attachment', 'a.txt'), `attachment; filename="a.txt"; filename*=UTF-8''a.txt`)
  assert.equal(
    contentDisposition('attachment', '../../etc/passwd'),
    `attachment; filename=".._.._etc_passwd"; filename*=UTF-8''.._.._etc_passwd`,
  )
  assert.equal(
    contentDisposition('inline', 'line\r\nSet-Cookie: x=1'),
    `inline; filename="line__Set-Cookie: x=1"; filename*=UTF-8''line__Set-Cookie%3A%20x%3D1`,
  )
  assert.equal(contentDisposition('attachment', '  '), `attachment; filename="file"; filename*=UTF-8''file`)
  assert.equal(
    contentDisposition('attachment', '日本.txt'),
    `attachment; filename="__.txt"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.txt`,
  )
})

test('Range headers: one range is served, anything else is the whole file or 416', () => {
  assert.deepEqual(readRange(undefined, 10), { kind: 'whole' })
  assert.deepEqual(readRange('bytes=2-4', 10), { kind: 'part', start: 2, end: 4 })
  assert.deepEqual(readRange('bytes=2-', 10), { kind: 'part', start: 2, end: 9 })
  assert.deepEqual(readRange('bytes=5-100', 10), { kind: 'part', start: 5, end: 9 })
  assert.deepEqual(readRange('bytes=-3', 10), { kind: 'part', start: 7, end: 9 })
  assert.deepEqual(readRange('bytes=-30', 10), { kind: 'part', start: 0, end: 9 })
  assert.deepEqual(readRange('bytes=10-', 10), { kind: 'unsatisfiable' })
  assert.deepEqual(readRange('bytes=-0', 10), { kind: 'unsatisfiable' })
  assert.deepEqual(readRange('bytes=0-0', 0), { kind: 'unsatisfiable' })
  for (const ignored of [
    'bytes=0-1,3-4',
    'items=0-1',
    'bytes=4-2',
    'bytes=-',
    'bytes=a-b',
    'bytes=99999999999999999-',
  ]) {
    assert.deepEqual(readRange(ignored, 10), { kind: 'whole' }, ignored)
  }
})
