import assert from 'node:assert/strict'
import { json, listen, until } from '@atrium/platform/testing'
import { createClock } from '../../test/support.ts'
import {
  checksumOf,
  createUpload,
  forEachStorage,
  offsetOf,
  patchChunk,
  startPartialPatch,
  startUploadGateway,
  testBytes,
  tusHeaders,
} from '../../test/uploads.ts'
import { buildGateway } from '../app.ts'

forEachStorage('OPTIONS advertises tus 1.0 with crc32 checksums and the size limit', async (t, dialect, backend) => {
  const { uploads } = await startUploadGateway(t, dialect, { backend, settings: { Files: { MaxFileSize: 5000 } } })
  const response = await fetch(uploads, { method: 'OPTIONS' })
  assert.equal(response.status, 204)
  assert.equal(response.headers.get('tus-version'), '1.0.0')
  assert.equal(response.headers.get('tus-resumable'), '1.0.0')
  assert.equal(response.headers.get('tus-checksum-algorithm'), 'crc32')
  assert.equal(response.headers.get('tus-max-size'), '5000')
  assert.deepEqual(response.headers.get('tus-extension')?.split(',').sort(), [
    'checksum',
    'creation',
    'expiration',
    'termination',
  ])
})

forEachStorage('an upload in several checked chunks stores exactly the bytes sent', async (t, dialect, backend) => {
  const { uploads, user, storedBytes } = await startUploadGateway(t, dialect, { backend })
  const headers = tusHeaders(user)
  const data = testBytes(10_000)
  const url = await createUpload(uploads, headers, data.length)
  assert.match(url, /\/auth\/v1\/uploads\/\d+$/)
  assert.equal(await offsetOf(url, headers), 0)

  for (const [start, end] of [
    [0, 4096],
    [4096, 8192],
    [8192, 10_000],
  ] as const) {
    const response = await patchChunk(url, headers, start, data.subarray(start, end))
    assert.equal(response.status, 204, await response.text())
    assert.equal(response.headers.get('upload-offset'), String(end))
    assert.equal(response.headers.get('tus-resumable'), '1.0.0')
  }
  assert.deepEqual(await storedBytes(url), data)
  const head = await fetch(url, { method: 'HEAD', headers })
  assert.equal(head.headers.get('upload-offset'), '10000')
  assert.equal(head.headers.get('upload-length'), '10000')
  assert.equal(head.headers.get('cache-control'), 'no-store')
})

forEachStorage('a chunk with a wrong CRC32 answers 460 and is not kept', async (t, dialect, backend) => {
  const { uploads, user, storedBytes, store } = await startUploadGateway(t, dialect, { backend })
  const headers = tusHeaders(user)
  const data = testBytes(3000)
  const url = await createUpload(uploads, headers, data.length)
  assert.equal((await patchChunk(url, headers, 0, data.subarray(0, 1000))).status, 204)

  const corrupted = Buffer.from(data.subarray(1000, 2000))
  corrupted[500] = (corrupted[500] ?? 0) ^ 0xff
  const refused = await patchChunk(url, headers, 1000, corrupted, checksumOf(data.subarray(1000, 2000)))
  assert.equal(refused.status, 460)
  const { error } = await json(refused)
  assert.equal(error.code, 2116)
  assert.equal(await offsetOf(url, headers), 1000)
  assert.deepEqual(await storedBytes(url), data.subarray(0, 1000))

  assert.equal((await patchChunk(url, headers, 1000, data.subarray(1000, 2000))).status, 204)
  assert.equal((await patchChunk(url, headers, 2000, data.subarray(2000))).status, 204)
  assert.deepEqual(await storedBytes(url), data)
  const row = await store.db.selectFrom('uploads').selectAll().executeTakeFirstOrThrow()
  assert.equal(row.state, 'finished')
  // A finished upload waits to be attached for Files.ExpirySeconds (a day by default).
  assert.ok(Math.abs(row.expires - (Date.now() + 86_400_000)) < 60_000, String(row.expires))
})

forEachStorage('an upload resumes at its last good offset after the gateway restarts', async (t, dialect, backend) => {
  const { uploads, user, storedBytes, app, config } = await startUploadGateway(t, dialect, { backend })
  const headers = tusHeaders(user)
  const data = testBytes(8000, 3)
  const url = await createUpload(uploads, headers, data.length)
  assert.equal((await patchChunk(url, headers, 0, data.subarray(0, 4000))).status, 204)
  await app.close()

  const restarted = await buildGateway(config)
  const base = await listen(t, restarted)
  const moved = url.replace(/^http:\/\/[^/]+/, base)
  assert.equal(await offsetOf(moved, headers), 4000)
  assert.equal((await patchChunk(moved, headers, 4000, data.subarray(4000))).status, 204)
  assert.deepEqual(await storedBytes(url), data)
})

forEachStorage('a chunk at another offset than the upload is at answers 409', async (t, dialect, backend) => {
  const { uploads, user } = await startUploadGateway(t, dialect, { backend })
  const headers = tusHeaders(user)
  const data = testBytes(2000)
  const url = await createUpload(uploads, headers, data.length)
  assert.equal((await patchChunk(url, headers, 0, data.subarray(0, 1000))).status, 204)
  const response = await patchChunk(url, headers, 500, data.subarray(500, 1500))
  assert.equal(response.status, 409)
  assert.equal((await json(response)).error.code, 2112)
  assert.equal(await offsetOf(url, headers), 1000)
})

forEachStorage('termination removes the bytes and the upload', async (t, dialect, backend) => {
  const { uploads, user, store, holds } = await startUploadGateway(t, dialect, { backend })
  const headers = tusHeaders(user)
  const url = await createUpload(uploads, headers, 100)
  assert.equal((await patchChunk(url, headers, 0, testBytes(50))).status, 204)
  const response = await fetch(url, { method: 'DELETE', headers })
  assert.equal(response.status, 204)
  assert.equal(await holds(url), false)
  assert.equal(await store.db.selectFrom('uploads').selectAll().executeTakeFirst(), undefined)
  assert.equal(await offsetOf(url, headers), 'status 404')
})

forEachStorage('an unfinished upload past its expiry answers 410 before any sweep', async (t, dialect, backend) => {
  const clock = createClock(Date.now())
  // The sweep runs every five minutes (the default), so it cannot remove the upload between the checks.
  const { uploads, user } = await startUploadGateway(t, dialect, {
    backend,
    now: clock.now,
    settings: { Files: { ExpirySeconds: 60 } },
  })
  const headers = tusHeaders(user)
  const url = await createUpload(uploads, headers, 100)
  assert.equal((await patchChunk(url, headers, 0, testBytes(50))).status, 204)
  clock.advance(59_000)
  assert.equal(await offsetOf(url, headers), 50)
  clock.advance(2_000)
  assert.equal(await offsetOf(url, headers), 'status 410')
  const late = await patchChunk(url, headers, 50, testBytes(50))
  assert.equal(late.status, 410)
  assert.equal((await json(late)).error.code, 2111)
})

forEachStorage('the sweep removes an expired upload and keeps a finished one', async (t, dialect, backend) => {
  const clock = createClock(Date.now())
  const { uploads, user, storedBytes, store, holds } = await startUploadGateway(t, dialect, {
    backend,
    now: clock.now,
    settings: { Files: { ExpirySeconds: 60 }, Sessions: { SweepSeconds: 1 } },
  })
  const headers = tusHeaders(user)
  const url = await createUpload(uploads, headers, 100)
  const finished = await createUpload(uploads, headers, 10)
  assert.equal((await patchChunk(url, headers, 0, testBytes(50))).status, 204)
  assert.equal((await patchChunk(finished, headers, 0, testBytes(10))).status, 204)
  clock.advance(61_000)

  await until(
    async () => (await store.db.selectFrom('uploads').select('id').execute()).length === 1,
    'the sweep removed the expired upload',
  )
  assert.equal(await holds(url), false)
  assert.equal((await storedBytes(finished)).length, 10, 'a finished upload is no upload that expires')
  assert.equal(await offsetOf(url, headers), 'status 404')
})

forEachStorage('a zero-length upload is finished at creation', async (t, dialect, backend) => {
  const { uploads, user, store } = await startUploadGateway(t, dialect, { backend })
  const headers = tusHeaders(user)
  const url = await createUpload(uploads, headers, 0)
  assert.equal(await offsetOf(url, headers), 0)
  const row = await store.db.selectFrom('uploads').selectAll().executeTakeFirstOrThrow()
  assert.equal(row.state, 'finished')
})

forEachStorage(
  'a chunk cut off without a checksum keeps what arrived; with one it keeps nothing',
  async (t, dialect, backend) => {
    const { uploads, user, storedBytes, arrivingBytes } = await startUploadGateway(t, dialect, { backend })
    const headers = tusHeaders(user)
    const data = testBytes(4000)
    const plain = await createUpload(uploads, headers, data.length)
    const cut = startPartialPatch(plain, headers, 4000, data.subarray(0, 1500))
    await until(async () => (await arrivingBytes(plain)) === 1500, 'the first bytes arrived')
    cut()
    await until(async () => (await offsetOf(plain, headers)) === 1500, 'the received bytes were kept')
    assert.equal((await patchChunk(plain, headers, 1500, data.subarray(1500))).status, 204)
    assert.deepEqual(await storedBytes(plain), data)

    const checked = await createUpload(uploads, headers, data.length)
    const cutChecked = startPartialPatch(
      checked,
      { ...headers, 'Upload-Checksum': checksumOf(data) },
      4000,
      data.subarray(0, 1500),
    )
    await until(async () => (await arrivingBytes(checked)) === 1500, 'the first bytes arrived')
    cutChecked()
    await until(async () => (await arrivingBytes(checked)) === 0, 'the unverifiable bytes were dropped')
    assert.equal(await offsetOf(checked, headers), 0)
  },
)
