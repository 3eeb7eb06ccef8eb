import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  type Attachment,
  type AttachmentAction,
  attachmentsReducer,
  percentOf,
  traySummary,
} from './attachment-state.ts'
import { uploadFailure } from './upload-failure.ts'

function run(...actions: AttachmentAction[]): Attachment[] {
  return actions.reduce(attachmentsReducer, [] as Attachment[])
}

const add = (key: string, size = 1000): AttachmentAction => ({ type: 'added', key, name: `${key}.bin`, size, mime: '' })

test('an added file uploads, reports progress and is done with its token', () => {
  const state = run(add('a'), { type: 'progress', key: 'a', sent: 400 })
  assert.equal(state[0]!.status, 'uploading')
  assert.equal(state[0]!.sent, 400)
  assert.deepEqual(traySummary(state), { ready: false, uploading: 1, failed: 0, percent: 40 })
  const done = attachmentsReducer(state, { type: 'uploaded', key: 'a', token: 'tok-1' })
  assert.deepEqual([done[0]!.status, done[0]!.sent, done[0]!.token], ['done', 1000, 'tok-1'])
  assert.equal(traySummary(done).ready, true)
})

test('the tray is ready only when every file is done', () => {
  const state = run(add('a'), add('b'), { type: 'uploaded', key: 'a', token: 't' })
  assert.equal(traySummary(state).ready, false)
  assert.equal(traySummary([]).ready, false)
  assert.equal(traySummary(attachmentsReducer(state, { type: 'removed', key: 'b' })).ready, true)
})

test('an interrupted upload fails resumable, resumes and keeps its progress', () => {
  const failed = run(
    add('a'),
    { type: 'progress', key: 'a', sent: 500 },
    { type: 'stopped', key: 'a', failure: uploadFailure(0, '') },
  )
  assert.deepEqual([failed[0]!.status, failed[0]!.resumable, failed[0]!.sent], ['failed', true, 500])
  assert.equal(failed[0]!.error, 'The connection was interrupted.')
  const resumed = attachmentsReducer(failed, { type: 'resumed', key: 'a' })
  assert.deepEqual([resumed[0]!.status, resumed[0]!.error, resumed[0]!.sent], ['uploading', '', 500])
})

test('going offline pauses an upload, which counts as still uploading', () => {
  const paused = run(add('a'), { type: 'stopped', key: 'a', failure: uploadFailure(0, '', false) })
  assert.equal(paused[0]!.status, 'paused')
  assert.equal(traySummary(paused).uploading, 1)
  assert.equal(attachmentsReducer(paused, { type: 'resumed', key: 'a' })[0]!.status, 'uploading')
})

test('a final refusal cannot be resumed', () => {
  const refused = run(add('a'), {
    type: 'stopped',
    key: 'a',
    failure: uploadFailure(413, JSON.stringify({ error: { code: 2115, message: 'quota exceeded' } })),
  })
  assert.deepEqual([refused[0]!.status, refused[0]!.resumable], ['failed', false])
  assert.equal(attachmentsReducer(refused, { type: 'resumed', key: 'a' })[0]!.status, 'failed')
  assert.equal(traySummary(refused).failed, 1)
})

test('late reports do not undo a finished upload, and progress stays within the file', () => {
  const done = run(add('a'), { type: 'uploaded', key: 'a', token: 't' })
  assert.deepEqual(attachmentsReducer(done, { type: 'stopped', key: 'a', failure: uploadFailure(0, '') }), done)
  assert.deepEqual(attachmentsReducer(done, { type: 'progress', key: 'a', sent: 3 }), done)
  assert.equal(run(add('b', 10), { type: 'progress', key: 'b', sent: 99 })[0]!.sent, 10)
})

test('adding a key twice keeps one entry; removing drops it', () => {
  assert.equal(run(add('a'), add('a')).length, 1)
  assert.deepEqual(run(add('a'), { type: 'removed', key: 'a' }), [])
})

test('percent is whole and an empty file counts as complete', () => {
  assert.equal(percentOf(1, 3), 33)
  assert.equal(percentOf(0, 0), 100)
  assert.equal(percentOf(5, 4), 100)
})
