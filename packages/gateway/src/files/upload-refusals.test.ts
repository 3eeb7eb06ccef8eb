import assert from 'node:assert/strict'
import { Agent, request } from 'node:http'
import { errorCodes } from '@atrium/platform'
import { json, until } from '@atrium/platform/testing'
import { signedInUser } from '../../test/support.ts'
import {
  createUpload,
  forEachStorage,
  offsetOf,
  patchChunk,
  startPartialPatch,
  startUploadGateway,
  testBytes,
  tusHeaders,
} from '../../test/uploads.ts'

const TUS = { 'Tus-Resumable': '1.0.0' }

forEachStorage('an anonymous caller is refused every upload operation (401)', async (t, dialect, backend) => {
  const { uploads, user } = await startUploadGateway(t, dialect, { backend })
  const url = await createUpload(uploads, tusHeaders(user), 100)
  const anonymous = [
    await fetch(uploads, { method: 'POST', headers: { ...TUS, 'Upload-Length': '10' } }),
    await fetch(url, { method: 'HEAD', headers: TUS }),
    await patchChunk(url, TUS, 0, testBytes(10)),
    await fetch(url, { method: 'DELETE', headers: TUS }),
  ]
  assert.deepEqual(
    anonymous.map((response) => response.status),
    [401, 401, 401, 401],
  )
  assert.equal((await json(anonymous[0]!)).error.code, 2003)
  assert.equal(await offsetOf(url, tusHeaders(user)), 0)
})

forEachStorage("another user's upload is not found (404) and stays untouched", async (t, dialect, backend) => {
  const gateway = await startUploadGateway(t, dialect, { backend })
  const owner = tusHeaders(gateway.user)
  const stranger = tusHeaders(await signedInUser(gateway))
  const url = await createUpload(gateway.uploads, owner, 100)
  assert.equal((await patchChunk(url, owner, 0, testBytes(40))).status, 204)

  const head = await fetch(url, { method: 'HEAD', headers: stranger })
  const patch = await patchChunk(url, stranger, 40, testBytes(60))
  const remove = await fetch(url, { method: 'DELETE', headers: stranger })
  assert.deepEqual([head.status, patch.status, remove.status], [404, 404, 404])
  assert.equal((await json(patch)).error.code, 2110)
  assert.equal(await offsetOf(url, owner), 40)
  assert.deepEqual(await gateway.storedBytes(url), testBytes(40))
})

forEachStorage('a cookie session must send its CSRF token; an API key need not', async (t, dialect, backend) => {
  const gateway = await startUploadGateway(t, dialect, { backend })
  const { 'X-CSRF-Token': _token, ...withoutToken } = tusHeaders(gateway.user)
  const url = await createUpload(gateway.uploads, tusHeaders(gateway.user), 100)
  const refused = [
    await fetch(gateway.uploads, { method: 'POST', headers: { ...withoutToken, 'Upload-Length': '10' } }),
    await patchChunk(url, withoutToken, 0, testBytes(10)),
    await fetch(url, { method: 'DELETE', headers: withoutToken }),
  ]
  assert.deepEqual(
    refused.map((response) => response.status),
    [403, 403, 403],
  )
  assert.equal((await json(refused[1]!)).error.code, 2004)
  assert.equal(await offsetOf(url, tusHeaders(gateway.user)), 0)

  const { key } = await gateway.store.apiKeys.create({
    keyType: 'user',
    crmId: gateway.user.crmId,
    appId: 0,
    scopes: [],
    name: 'uploader',
  })
  const bearer = { ...TUS, Authorization: `Bearer ${key}` }
  assert.equal((await patchChunk(url, bearer, 0, testBytes(100))).status, 204)
})

forEachStorage('a service key cannot upload: uploads belong to users (403)', async (t, dialect, backend) => {
  const gateway = await startUploadGateway(t, dialect, { backend })
  const app = await gateway.store.apps.create({ name: 'shop', owner: gateway.user.crmId })
  const { key } = await gateway.store.apiKeys.create({
    keyType: 'service',
    crmId: 0,
    appId: app.app.id,
    scopes: [],
    name: 'service',
  })
  const response = await fetch(gateway.uploads, {
    method: 'POST',
    headers: { ...TUS, Authorization: `Bearer ${key}`, 'Upload-Length': '10' },
  })
  assert.equal(response.status, 403)
})

forEachStorage('sizes, quota, lengths and types are checked at creation', async (t, dialect, backend) => {
  const { uploads, user } = await startUploadGateway(t, dialect, {
    backend,
    settings: { Files: { MaxFileSize: 1000, QuotaBytes: 1500, DeniedContentTypes: ['video/*', 'text/html'] } },
  })
  const headers = tusHeaders(user)
  const create = (extra: Record<string, string>) =>
    fetch(uploads, { method: 'POST', headers: { ...headers, ...extra } })
  const metadata = (type: string) => `filename ${Buffer.from('a.bin').toString('base64')},filetype ${btoa(type)}`

  const tooLarge = await create({ 'Upload-Length': '1001' })
  assert.equal(tooLarge.status, 413)
  assert.equal((await json(tooLarge)).error.code, 2114)
  const deferred = await create({ 'Upload-Defer-Length': '1' })
  assert.equal(deferred.status, 400)
  assert.equal((await json(deferred)).error.code, 2117)
  const video = await create({ 'Upload-Length': '10', 'Upload-Metadata': metadata('video/mp4') })
  assert.equal(video.status, 415)
  assert.equal((await json(video)).error.code, 2118)
  assert.equal((await create({ 'Upload-Length': '10', 'Upload-Metadata': metadata('TEXT/HTML') })).status, 415)
  const { 'Tus-Resumable': _, ...unversioned } = headers
  for (const version of ['0.2.2', '1.0', '']) {
    const noVersion = await fetch(uploads, {
      method: 'POST',
      headers: { ...unversioned, ...(version && { 'Tus-Resumable': version }), 'Upload-Length': '10' },
    })
    assert.equal(noVersion.status, 412, version)
    // tus 1.0: the 412 names the versions the server speaks.
    assert.equal(noVersion.headers.get('tus-version'), '1.0.0', version)
    assert.equal(noVersion.headers.get('tus-resumable'), '1.0.0', version)
    assert.equal((await json(noVersion)).error.code, errorCodes.TusVersionUnsupported.code, version)
  }

  assert.equal((await create({ 'Upload-Length': '1000', 'Upload-Metadata': metadata('image/png') })).status, 201)
  const overQuota = await create({ 'Upload-Length': '501' })
  assert.equal(overQuota.status, 413)
  assert.equal((await json(overQuota)).error.code, 2115)
  assert.equal((await create({ 'Upload-Length': '500' })).status, 201)
})

forEachStorage('a chunk over the limits answers 413 and the connection stays usable', async (t, dialect, backend) => {
  const { uploads, user, storedBytes } = await startUploadGateway(t, dialect, {
    backend,
    settings: { Files: { MaxChunkSize: 1000 } },
  })
  const headers = tusHeaders(user)
  const url = await createUpload(uploads, headers, 1500)
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.after(() => agent.destroy())
  const sockets = new Set<unknown>()
  function send(method: string, chunk: Buffer | undefined, extra: Record<string, string> = {}) {
    return new Promise<number>((resolve, reject) => {
      const req = request(url, { method, agent, headers: { ...headers, ...extra } }, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      })
      req.on('socket', (socket) => sockets.add(socket))
      req.on('error', reject)
      req.end(chunk)
    })
  }
  const patch = { 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': '0' }
  // Declared too long, and (chunked, no Content-Length) found too long while streaming.
  assert.equal(await send('PATCH', testBytes(1001), patch), 413)
  assert.equal(await send('PATCH', testBytes(1200), { ...patch, 'Transfer-Encoding': 'chunked' }), 413)
  assert.equal(await send('HEAD', undefined), 200)
  assert.equal(sockets.size, 1, 'one connection carried the refused chunks and the next request')
  assert.equal(await offsetOf(url, headers), 0)
  assert.equal((await storedBytes(url)).length, 0)

  assert.equal((await patchChunk(url, headers, 0, testBytes(1000))).status, 204)
  const beyond = await patchChunk(url, headers, 1000, testBytes(600))
  assert.equal(beyond.status, 413, 'a chunk may not run past Upload-Length')
  assert.equal(await offsetOf(url, headers), 1000)
})

forEachStorage('a PATCH body must be application/offset+octet-stream (415)', async (t, dialect, backend) => {
  const { uploads, user } = await startUploadGateway(t, dialect, { backend })
  const headers = tusHeaders(user)
  const url = await createUpload(uploads, headers, 10)
  const response = await fetch(url, {
    method: 'PATCH',
    headers: { ...headers, 'Content-Type': 'application/octet-stream', 'Upload-Offset': '0' },
    body: new Uint8Array(testBytes(10)),
  })
  assert.equal(response.status, 415)
  assert.equal((await json(response)).error.code, 1003)
  assert.equal(await offsetOf(url, headers), 0)
})

forEachStorage(
  'checksums: only crc32 is taken, and RequireChecksum refuses a chunk without one',
  async (t, dialect, backend) => {
    const { uploads, user } = await startUploadGateway(t, dialect, {
      backend,
      settings: { Files: { RequireChecksum: true } },
    })
    const headers = tusHeaders(user)
    const url = await createUpload(uploads, headers, 10)
    assert.equal((await patchChunk(url, headers, 0, testBytes(10), 'sha1 Kq5sNclPz7QV2+lfQIuc6R7oRu0=')).status, 400)
    assert.equal((await patchChunk(url, headers, 0, testBytes(10), null)).status, 400)
    assert.equal(await offsetOf(url, headers), 0)
    assert.equal((await patchChunk(url, headers, 0, testBytes(10))).status, 204)
  },
)

forEachStorage(
  'while a chunk arrives, a second writer waits (423) and a stranger still gets 404',
  async (t, dialect, backend) => {
    const gateway = await startUploadGateway(t, dialect, { backend })
    const owner = tusHeaders(gateway.user)
    const stranger = tusHeaders(await signedInUser(gateway))
    const url = await createUpload(gateway.uploads, owner, 2000)
    const cut = startPartialPatch(url, owner, 2000, testBytes(500))
    await until(async () => (await gateway.arrivingBytes(url)) === 500, 'the first chunk is arriving')

    // Cut in any case: an open request would hold the gateway's close, and the test, forever.
    try {
      const second = await patchChunk(url, owner, 0, testBytes(2000))
      assert.equal(second.status, 423)
      assert.equal((await json(second)).error.code, 2119)
      assert.equal((await fetch(url, { method: 'DELETE', headers: owner })).status, 423)
      assert.equal((await patchChunk(url, stranger, 0, testBytes(2000))).status, 404)
      assert.equal((await fetch(url, { method: 'DELETE', headers: stranger })).status, 404)
    } finally {
      cut()
    }
    await until(async () => (await offsetOf(url, owner)) === 500, 'the cut chunk was kept')
  },
)
