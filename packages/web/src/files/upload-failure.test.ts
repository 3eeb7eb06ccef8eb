import assert from 'node:assert/strict'
import { test } from 'node:test'
import { shouldRetryUpload, uploadFailure } from './upload-failure.ts'

const envelope = (code: number, message: string, details?: unknown) =>
  JSON.stringify({ error: { code, message, details }, id: 'req-1' })

test('a refusal the same file meets again is said in words from its code, with its facts, and cannot be resumed', () => {
  const quota = uploadFailure(
    413,
    envelope(2115, 'your uploads may take 10485760 bytes together', { quotaBytes: 10 * 1024 * 1024 }),
  )
  assert.deepEqual(quota, {
    message:
      'This file does not fit in your file storage (10 MB). Delete files you no longer need, or ask your administrator for more.',
    resumable: false,
    offline: false,
    kind: 'QuotaExceeded',
  })
  assert.equal(uploadFailure(413, envelope(2114, 'too large')).resumable, false)
  assert.equal(
    uploadFailure(415, envelope(2118, 'files of type text/html are not accepted')).kind,
    'FileTypeNotAllowed',
  )
})

test('a broken connection, a server error or a checksum mismatch can be resumed', () => {
  assert.deepEqual(uploadFailure(0, ''), {
    message: 'The connection was interrupted.',
    resumable: true,
    offline: false,
    kind: '',
  })
  assert.equal(
    uploadFailure(502, '<html>Bad gateway</html>').message,
    'The server had a problem (502). Resume the upload in a moment.',
  )
  assert.equal(uploadFailure(502, '').resumable, true)
  const mismatch = uploadFailure(460, envelope(2116, 'the chunk does not match its checksum'))
  assert.equal(mismatch.resumable, true)
  assert.equal(mismatch.message, 'Part of the file arrived damaged. Resume the upload to send it again.')
})

test('offline is said so, and resumes by itself', () => {
  const offline = uploadFailure(0, '', false)
  assert.equal(offline.offline, true)
  assert.equal(offline.resumable, true)
})

test('signed out is said in the words of the client, not resumable', () => {
  const out = uploadFailure(401, envelope(2003, 'session required'))
  assert.equal(out.message, 'You were signed out. Sign in again to upload.')
  assert.equal(out.resumable, false)
})

test('a broken connection, a lock, a rate limit, a checksum mismatch and server errors are retried, refusals not', () => {
  for (const status of [0, 409, 423, 429, 460, 500, 502, 503])
    assert.equal(shouldRetryUpload(status, true), true, `${status}`)
  for (const status of [400, 401, 403, 404, 410, 413, 415])
    assert.equal(shouldRetryUpload(status, true), false, `${status}`)
  assert.equal(shouldRetryUpload(0, false), false, 'offline pauses instead')
})
