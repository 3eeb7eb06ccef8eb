import assert from 'node:assert/strict'
import { DefaultHttpStack, type HttpRequest, type HttpStack, Upload, type UploadOptions } from 'tus-js-client'
import { checksumOf, forEachStorage, startUploadGateway, testBytes, tusHeaders } from '../../test/uploads.ts'

/** Runs a tus-js-client upload to its end: the upload URL, or the error it gave up with. */
function runUpload(data: Buffer, options: UploadOptions): Promise<{ url: string; error?: Error }> {
  return new Promise((resolve) => {
    const upload = new Upload(data, {
      retryDelays: [],
      ...options,
      onSuccess: () => resolve({ url: upload.url ?? '' }),
      onError: (error) => resolve({ url: upload.url ?? '', error }),
    })
    upload.start()
  })
}

/**
 * tus-js-client's own HTTP stack with an Upload-Checksum on every chunk (tus-js-client has no
 * checksum option); `corrupt` may change a chunk's bytes after its checksum was taken.
 */
function checksummingStack(corrupt: (chunk: Uint8Array) => Uint8Array = (chunk) => chunk): HttpStack {
  const inner = new DefaultHttpStack({})
  return {
    getName: () => 'checksumming',
    createRequest(method, url): HttpRequest {
      const request = inner.createRequest(method, url)
      const send = request.send.bind(request)
      request.send = (body) => {
        if (!(body instanceof Uint8Array)) return send(body)
        request.setHeader('Upload-Checksum', checksumOf(body))
        return send(corrupt(body))
      }
      return request
    },
  }
}

forEachStorage('tus-js-client uploads a file in chunks, unchanged', async (t, dialect, backend) => {
  const { uploads, user, storedBytes, store } = await startUploadGateway(t, dialect, { backend })
  const data = testBytes(50_000)
  const { 'Tus-Resumable': _, ...headers } = tusHeaders(user)
  const { url, error } = await runUpload(data, {
    endpoint: uploads,
    chunkSize: 16_384,
    headers,
    metadata: { filename: 'report – Q3.pdf', filetype: 'application/pdf' },
  })
  assert.equal(error, undefined)
  assert.deepEqual(await storedBytes(url), data)
  const row = await store.db.selectFrom('uploads').selectAll().executeTakeFirstOrThrow()
  assert.deepEqual([row.state, row.file_name, row.content_type], ['finished', 'report – Q3.pdf', 'application/pdf'])
})

forEachStorage(
  'tus-js-client with checksums: a corrupted chunk is refused and the upload resumes',
  async (t, dialect, backend) => {
    const { uploads, user, storedBytes } = await startUploadGateway(t, dialect, { backend })
    const data = testBytes(40_000, 11)
    const { 'Tus-Resumable': _, ...headers } = tusHeaders(user)
    let chunks = 0
    const broken = await runUpload(data, {
      endpoint: uploads,
      chunkSize: 10_000,
      headers,
      httpStack: checksummingStack((chunk) => {
        chunks += 1
        return chunks === 2 ? Buffer.from(chunk).fill(0, 100, 200) : chunk
      }),
    })
    assert.match(String(broken.error), /response code: 460/)
    assert.deepEqual(await storedBytes(broken.url), data.subarray(0, 10_000))

    const resumed = await runUpload(data, {
      uploadUrl: broken.url,
      chunkSize: 10_000,
      headers,
      httpStack: checksummingStack(),
    })
    assert.equal(resumed.error, undefined)
    assert.equal(resumed.url, broken.url)
    assert.deepEqual(await storedBytes(broken.url), data)
  },
)
