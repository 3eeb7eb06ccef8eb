import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { DefaultHttpStack, type HttpRequest, type HttpStack, Upload } from 'tus-js-client'
import { signedInUser, startGateway } from '../../../gateway/test/support.ts'
import { checksummingStack } from './checksum-stack.ts'
import { uploadChecksum } from './crc32.ts'

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

test('the gateway accepts every chunk with the checksum the stack sets, when it requires one', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-web-uploads-'))
  t.after(() => rm(directory, { recursive: true, force: true }))
  const gateway = await startGateway(t, 'sqlite', {
    settings: { LocalFileStoragePath: directory, Files: { RequireChecksum: true } },
  })
  const { 'X-CSRF-Token': csrf = '', Cookie: cookie = '' } = (await signedInUser(gateway)).headers
  const data = Buffer.from(Uint8Array.from({ length: 35_000 }, (_, i) => (i * 7919) & 0xff))
  const url = await new Promise<string>((resolve, reject) => {
    const upload = new Upload(data, {
      endpoint: `${gateway.url}/auth/v1/uploads`,
      chunkSize: 10_000,
      retryDelays: [],
      headers: { Cookie: cookie },
      httpStack: checksummingStack(new DefaultHttpStack({}), () => ({ 'X-CSRF-Token': csrf })),
      onSuccess: () => resolve(upload.url ?? ''),
      onError: reject,
    })
    upload.start()
  })
  // The local storage names an upload's file by the upload id, the last part of its URL.
  assert.deepEqual(await readFile(join(directory, url.split('/').at(-1)!)), data)
})
