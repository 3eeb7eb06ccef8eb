import assert from 'node:assert/strict'
import { buffer } from 'node:stream/consumers'
import { test } from 'node:test'
import { createTestDatabaseUrl, forEachDialect, json, listen } from '@atrium/platform/testing'
import { startS3Server } from '../../test/s3-server.ts'
import { capturedLog, SERVICE_SECRET, signedInUser } from '../../test/support.ts'
import {
  assertSameBytes,
  checksumOf,
  createUpload,
  patchChunk,
  startUploadGateway,
  testBytes,
  tusHeaders,
} from '../../test/uploads.ts'
import { buildGateway } from '../app.ts'
import { redactConfig } from '../cli/redact.ts'
import { loadGatewayConfig } from '../config.ts'
import { FileMissingError } from './file-storage.ts'
import { createS3FileStorage } from './s3-storage.ts'

const MiB = 1024 * 1024
const PART = 5 * MiB
const s3Settings = { Files: { S3: { PartSize: PART } } }

/** PATCHes `data` from `from` to `to` in chunks of `size`, each of which must be accepted. */
async function sendChunks(
  url: string,
  headers: Record<string, string>,
  data: Buffer,
  from: number,
  to: number,
  size: number,
) {
  for (let offset = from; offset < to; offset += size) {
    const response = await patchChunk(url, headers, offset, data.subarray(offset, Math.min(offset + size, to)))
    assert.equal(response.status, 204, await response.text())
  }
}

const keyOf = (url: string) => url.split('/').at(-1) ?? ''

/** Chunks as an AsyncIterable, the way the files plugin hands a PATCH body to the storage. */
async function* bodyOf(bytes: Buffer) {
  yield bytes
}

forEachDialect('chunks smaller than 5 MiB gather into parts of exactly PartSize', async (t, dialect) => {
  const gateway = await startUploadGateway(t, dialect, { backend: 's3', settings: s3Settings })
  const headers = tusHeaders(gateway.user)
  const data = testBytes(12 * MiB + 1234)
  const url = await createUpload(gateway.uploads, headers, data.length)
  await sendChunks(url, headers, data, 0, data.length, 700_001)

  const parts = gateway.s3?.requests.filter((request) => request.method === 'PUT' && request.query.partNumber) ?? []
  assert.deepEqual(
    parts.map((part) => [part.query.partNumber, part.length]),
    [
      ['1', PART],
      ['2', PART],
      ['3', 2 * MiB + 1234],
    ],
  )
  assertSameBytes(await gateway.storedBytes(url), data)
  assert.deepEqual(await gateway.s3?.keys(), [keyOf(url)], 'only the finished object is left')
  assert.deepEqual(await gateway.s3?.multipartUploads(), [])
})

forEachDialect('a restarted gateway continues an upload from what S3 holds', async (t, dialect) => {
  const { uploads, user, app, config, storedBytes } = await startUploadGateway(t, dialect, {
    backend: 's3',
    settings: s3Settings,
  })
  const headers = tusHeaders(user)
  const data = testBytes(7 * MiB, 5)
  const url = await createUpload(uploads, headers, data.length)
  await sendChunks(url, headers, data, 0, 6 * MiB, MiB)
  await app.close()

  const restarted = await buildGateway(config)
  const moved = url.replace(/^http:\/\/[^/]+/, await listen(t, restarted))
  await sendChunks(moved, headers, data, 6 * MiB, data.length, 300_000)
  assertSameBytes(await storedBytes(url), data)
})

forEachDialect(
  'a second gateway on the same database and bucket continues an upload of the first',
  async (t, dialect) => {
    const first = await startUploadGateway(t, dialect, { backend: 's3', settings: s3Settings })
    const second = await buildGateway({ ...first.config, NodeNumber: first.config.NodeNumber + 1 })
    const secondUrl = await listen(t, second)
    const headers = tusHeaders(first.user)
    const data = testBytes(11 * MiB, 9)
    const url = await createUpload(first.uploads, headers, data.length)
    const onSecond = url.replace(/^http:\/\/[^/]+/, secondUrl)

    await sendChunks(url, headers, data, 0, 3 * MiB, MiB)
    await sendChunks(onSecond, headers, data, 3 * MiB, 7 * MiB, 1_500_000)
    await sendChunks(url, headers, data, 7 * MiB, 9 * MiB, 2 * MiB)
    await sendChunks(onSecond, headers, data, 9 * MiB, data.length, 999_999)
    assertSameBytes(await first.storedBytes(url), data)
  },
)

forEachDialect('a chunk refused for its checksum (460) leaves S3 as it was', async (t, dialect) => {
  const gateway = await startUploadGateway(t, dialect, { backend: 's3', settings: s3Settings })
  const headers = tusHeaders(gateway.user)
  const data = testBytes(6 * MiB)
  const url = await createUpload(gateway.uploads, headers, data.length)
  await sendChunks(url, headers, data, 0, 2 * MiB, MiB)
  const keys = await gateway.s3?.keys()
  const seen = gateway.s3?.requests.length ?? 0

  const corrupted = Buffer.from(data.subarray(2 * MiB, 6 * MiB))
  corrupted[12_345] = (corrupted[12_345] ?? 0) ^ 0xff
  const refused = await patchChunk(url, headers, 2 * MiB, corrupted, checksumOf(data.subarray(2 * MiB, 6 * MiB)))
  assert.equal(refused.status, 460)
  const writes = gateway.s3?.requests.slice(seen).filter((request) => request.method !== 'GET')
  assert.deepEqual(writes, [], 'nothing was written to S3 for the refused chunk')
  assert.deepEqual(await gateway.s3?.keys(), keys)

  await sendChunks(url, headers, data, 2 * MiB, data.length, 4 * MiB)
  assertSameBytes(await gateway.storedBytes(url), data)
})

forEachDialect('an unfinished upload cannot be read as a file', async (t, dialect) => {
  const gateway = await startUploadGateway(t, dialect, { backend: 's3', settings: s3Settings })
  const headers = tusHeaders(gateway.user)
  const data = testBytes(6 * MiB)
  const url = await createUpload(gateway.uploads, headers, data.length)
  await sendChunks(url, headers, data, 0, 5 * MiB + 10, 5 * MiB + 10)
  await assert.rejects(gateway.storage.open(keyOf(url)), FileMissingError)
  assert.equal((await gateway.s3?.keys())?.includes(keyOf(url)), false)

  await sendChunks(url, headers, data, 5 * MiB + 10, data.length, MiB)
  assertSameBytes(await buffer(await gateway.storage.open(keyOf(url))), data)
})

forEachDialect('terminating an upload deletes its objects and aborts its multipart upload', async (t, dialect) => {
  const gateway = await startUploadGateway(t, dialect, { backend: 's3', settings: s3Settings })
  const headers = tusHeaders(gateway.user)
  const data = testBytes(8 * MiB)
  const url = await createUpload(gateway.uploads, headers, data.length)
  await sendChunks(url, headers, data, 0, 6 * MiB, 3 * MiB)
  assert.equal((await gateway.s3?.multipartUploads())?.length, 1)
  assert.notDeepEqual(await gateway.s3?.keys(), [])

  assert.equal((await fetch(url, { method: 'DELETE', headers })).status, 204)
  assert.deepEqual(await gateway.s3?.keys(), [])
  assert.deepEqual(await gateway.s3?.multipartUploads(), [])
})

test('remove deletes a finished file, and a missing one is no error', async (t) => {
  const s3 = await startS3Server(t)
  const storage = createS3FileStorage(loadS3Settings(s3.settings))
  await storage.create('k1')
  const staged = await storage.stage('k1', 0, bodyOf(testBytes(1000)))
  await staged.commit()
  await storage.finish('k1', 1000)
  assert.deepEqual(await s3.keys(), ['k1'])
  await storage.remove('k1')
  await storage.remove('never-there')
  assert.deepEqual(await s3.keys(), [])
  await assert.rejects(storage.open('k1'), FileMissingError)
})

test('open reads a byte range, across a part boundary too', async (t) => {
  const s3 = await startS3Server(t)
  const storage = createS3FileStorage(loadS3Settings({ ...s3.settings, PartSize: PART }))
  const data = testBytes(6 * MiB, 13)
  await storage.create('k1')
  await (await storage.stage('k1', 0, bodyOf(data))).commit()
  await storage.finish('k1', data.length)
  assertSameBytes(
    await buffer(await storage.open('k1', { start: PART - 3, end: PART + 2 })),
    data.subarray(PART - 3, PART + 3),
  )
  const last = data.length - 1
  assertSameBytes(await buffer(await storage.open('k1', { start: last, end: last })), data.subarray(last))
})

test('a chunk staged again at a recorded offset replaces what a crash left past it', async (t) => {
  const s3 = await startS3Server(t)
  const storage = createS3FileStorage(loadS3Settings({ ...s3.settings, PartSize: PART }))
  const data = testBytes(7 * MiB, 17)
  await storage.create('k1')
  await (await storage.stage('k1', 0, bodyOf(data.subarray(0, MiB)))).commit()
  // Committed to S3, but the gateway database never moved past MiB (a crash): S3 holds 6 MiB.
  await (await storage.stage('k1', MiB, bodyOf(testBytes(5 * MiB, 99)))).commit()
  const fresh = createS3FileStorage(loadS3Settings({ ...s3.settings, PartSize: PART }))
  await (await fresh.stage('k1', MiB, bodyOf(data.subarray(MiB)))).commit()
  await fresh.finish('k1', data.length)
  assertSameBytes(await buffer(await fresh.open('k1')), data)
  assert.deepEqual(await s3.keys(), ['k1'])
})

test('wrong credentials: the gateway answers 500 in the envelope, logs why, and keeps nothing', async (t) => {
  const s3 = await startS3Server(t)
  const { lines, stream } = capturedLog()
  const config = loadGatewayConfig(
    {
      GatewayDB: await createTestDatabaseUrl(t, 'sqlite'),
      ServiceSecret: SERVICE_SECRET,
      FileStorage: 's3',
      Files: { S3: { ...s3.settings, SecretAccessKey: 'not-the-secret' } },
    },
    {},
  )
  const app = await buildGateway(config, { logger: { level: 'info', stream } })
  const url = await listen(t, app)
  const user = await signedInUser({ store: app.store, config })
  const response = await fetch(`${url}/auth/v1/uploads`, {
    method: 'POST',
    headers: tusHeaders(user, { 'Upload-Length': '100' }),
  })
  assert.equal(response.status, 500)
  const { error } = await json(response)
  assert.equal(typeof error.code, 'number')
  assert.doesNotMatch(JSON.stringify(error), /SignatureDoesNotMatch|not-the-secret/)
  assert.match(lines.join(''), /SignatureDoesNotMatch/)
  assert.doesNotMatch(lines.join(''), /not-the-secret/)
  assert.equal(await app.store.db.selectFrom('uploads').selectAll().executeTakeFirst(), undefined)
  assert.deepEqual(await s3.keys(), [])
})

test('an endpoint on loopback is refused unless Files.S3.AllowPrivateAddresses', async (t) => {
  const s3 = await startS3Server(t)
  const storage = createS3FileStorage(loadS3Settings({ ...s3.settings, AllowPrivateAddresses: false }))
  await assert.rejects(storage.create('k1'), (error: Error) => {
    assert.equal(error.name, 'OutboundError')
    assert.match(error.message, /Files\.S3\.AllowPrivateAddresses/)
    return true
  })
  assert.deepEqual(s3.requests, [], 'no request reached the S3 server')
})

test('FileStorage s3 needs an endpoint, a bucket and keys; the secret is redacted', () => {
  assert.throws(
    () => loadGatewayConfig({ ServiceSecret: SERVICE_SECRET, FileStorage: 's3' }, {}),
    (error: Error) => {
      for (const name of ['Endpoint', 'Bucket', 'AccessKeyId', 'SecretAccessKey']) {
        assert.match(error.message, new RegExp(`Files\\.S3\\.${name}: required when FileStorage is "s3"`))
      }
      return true
    },
  )
  const config = loadGatewayConfig(
    { ServiceSecret: SERVICE_SECRET, Files: { S3: { SecretAccessKey: 'hush-hush', AccessKeyId: 'AKID' } } },
    {},
  )
  assert.doesNotMatch(JSON.stringify(redactConfig(config)), /hush-hush/)
})

function loadS3Settings(s3: Record<string, unknown>) {
  return loadGatewayConfig({ ServiceSecret: SERVICE_SECRET, FileStorage: 's3', Files: { S3: s3 } }, {}).Files.S3
}
