import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { DefaultHttpStack, type HttpRequest, type HttpStack, Upload } from 'tus-js-client'
import { signedInUser, startGateway } from '../../../gateway/test/support.ts'
import { checksummingStack } from './checksum-stack.ts'
import { uploadChecksum } from './crc32.ts'
import { shouldRetryUpload } from './upload-failure.ts'

/** A stack whose requests only record their headers and the body they were sent. */
function recordingStack(sent: { headers: Record<string, string>; body: unknown }[]): HttpStack {
  return {
    getName: () => 'recording',
    createRequest(method, url): HttpRequest {
      const headers: Record<string, string> = {}
      return {
        getMethod: () => method,
        getURL: () => url,
        setHeader(name, value) {
          headers[name] = value
        },
        getHeader: (name) => headers[name],
        setProgressHandler() {},
        async send(body) {
          sent.push({ headers: { ...headers }, body })
          return {
            getStatus: () => 204,
            getHeader: () => undefined,
            getBody: () => '',
            getUnderlyingObject: () => null,
          }
        },
        abort: async () => {},
        getUnderlyingObject: () => null,
      }
    },
  }
}

test('a Blob chunk, as the browser sends it, gets the CRC32 of its bytes and the session headers', async () => {
  const sent: { headers: Record<string, string>; body: unknown }[] = []
  const stack = checksummingStack(recordingStack(sent), () => ({ 'X-CSRF-Token': 'csrf-1', 'X-Device-Guid': 'guid-1' }))
  const bytes = new TextEncoder().encode('123456789')
  const blob = new Blob([bytes])
  await stack.createRequest('PATCH', '/auth/v1/uploads/1').send(blob)
  await stack.createRequest('HEAD', '/auth/v1/uploads/1').send(null)
  assert.equal(sent[0]!.headers['Upload-Checksum'], uploadChecksum(bytes))
  assert.equal(sent[0]!.body, blob, 'the chunk itself is sent unchanged')
  assert.equal(sent[0]!.headers['X-CSRF-Token'], 'csrf-1')
  assert.deepEqual(sent[1]!.headers, { 'X-CSRF-Token': 'csrf-1', 'X-Device-Guid': 'guid-1' })
})

test('a request aborted while its chunk is read is never sent', async () => {
  const sent: { headers: Record<string, string>; body: unknown }[] = []
  const request = checksummingStack(recordingStack(sent), () => ({})).createRequest('PATCH', '/u/1')
  const sending = request.send(new Blob([new Uint8Array(1000)]))
  await request.abort()
  await assert.rejects(sending, /aborted/)
  assert.equal(sent.length, 0)
})

/** A gateway keeping uploads in a directory of the test's own, requiring checksums, with a signed-in user. */
async function startChecksumGateway(t: TestContext) {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-web-uploads-'))
  t.after(() => rm(directory, { recursive: true, force: true }))
  const gateway = await startGateway(t, 'sqlite', {
    settings: { LocalFileStoragePath: directory, Files: { RequireChecksum: true } },
  })
  const { 'X-CSRF-Token': csrf = '', Cookie: cookie = '' } = (await signedInUser(gateway)).headers
  return {
    endpoint: `${gateway.url}/auth/v1/uploads`,
    cookie,
    headers: () => ({ 'X-CSRF-Token': csrf }),
    /** The bytes stored for an upload URL (the local storage names a file by the upload id). */
    stored: (url: string) => readFile(join(directory, url.split('/').at(-1)!)),
  }
}

/** Uploads `data` in chunks of 10,000 bytes through `stack`, retrying as the client does. */
function uploadWith(data: Buffer, endpoint: string, cookie: string, stack: HttpStack): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const upload = new Upload(data, {
      endpoint,
      chunkSize: 10_000,
      retryDelays: [0, 0],
      headers: { Cookie: cookie },
      httpStack: stack,
      onShouldRetry: (error) => shouldRetryUpload(error.originalResponse?.getStatus() ?? 0, true),
      onSuccess: () => resolve(upload.url ?? ''),
      onError: reject,
    })
    upload.start()
  })
}

const testData = () => Buffer.from(Uint8Array.from({ length: 35_000 }, (_, i) => (i * 7919) & 0xff))

test('the gateway accepts every chunk with the checksum the stack sets, when it requires one', async (t) => {
  const gateway = await startChecksumGateway(t)
  const data = testData()
  const url = await uploadWith(
    data,
    gateway.endpoint,
    gateway.cookie,
    checksummingStack(new DefaultHttpStack({}), gateway.headers),
  )
  assert.deepEqual(await gateway.stored(url), data)
})

test('a chunk damaged on the way is answered 460, sent again, and the file arrives whole', async (t) => {
  const gateway = await startChecksumGateway(t)
  const data = testData()
  const statuses: number[] = []
  let chunks = 0
  // Below the checksumming stack: the second chunk's bytes change after its checksum was taken.
  const damaging: HttpStack = {
    getName: () => 'damaging',
    createRequest(method, url) {
      const request = new DefaultHttpStack({}).createRequest(method, url)
      const send = request.send.bind(request)
      request.send = async (body) => {
        const damaged = body instanceof Uint8Array && ++chunks === 2 ? Buffer.from(body).fill(0, 10, 20) : body
        const response = await send(damaged)
        if (method === 'PATCH') statuses.push(response.getStatus())
        return response
      }
      return request
    },
  }
  const url = await uploadWith(data, gateway.endpoint, gateway.cookie, checksummingStack(damaging, gateway.headers))
  assert.deepEqual(statuses, [204, 460, 204, 204, 204])
  assert.deepEqual(await gateway.stored(url), data)
})
