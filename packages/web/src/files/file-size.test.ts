import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fileKind } from './file-kind.ts'
import { formatProgress, formatSize } from './file-size.ts'

test('sizes read in bytes, then KB, MB and GB of 1024', () => {
  assert.equal(formatSize(0), '0 B')
  assert.equal(formatSize(940), '940 B')
  assert.equal(formatSize(1023), '1023 B')
  assert.equal(formatSize(1024), '1.0 KB')
  assert.equal(formatSize(1536), '1.5 KB')
  assert.equal(formatSize(12 * 1024 + 300), '12 KB')
  assert.equal(formatSize(5 * 1024 * 1024), '5.0 MB')
  assert.equal(formatSize(123.4 * 1024 * 1024), '123 MB')
  assert.equal(formatSize(1024 ** 3), '1.0 GB')
  assert.equal(formatSize(3 * 1024 ** 4), '3.0 TB')
})

test('a size just under the next unit is rounded into it, never "1024 KB"', () => {
  assert.equal(formatSize(1024 * 1024 - 10), '1.0 MB')
  assert.equal(formatSize(1024 * 1024 - 600), '1023 KB')
})

test('sizes that are not a count of bytes show a dash', () => {
  assert.equal(formatSize(-1), '—')
  assert.equal(formatSize(Number.NaN), '—')
})

test('progress names both sizes', () => {
  assert.equal(formatProgress(5 * 1024 * 1024, 12 * 1024 * 1024), '5.0 MB of 12 MB')
})

test('a file kind comes from its content type, else from its name', () => {
  assert.equal(fileKind('image/png'), 'image')
  assert.equal(fileKind('IMAGE/JPEG; charset=binary'), 'image')
  assert.equal(fileKind('image/svg+xml', 'logo.svg'), 'file')
  assert.equal(fileKind('application/pdf'), 'pdf')
  assert.equal(fileKind('text/plain'), 'text')
  assert.equal(fileKind('text/html', 'page.html'), 'file')
  assert.equal(fileKind('video/mp4'), 'video')
  assert.equal(fileKind('audio/ogg'), 'audio')
  assert.equal(fileKind('application/zip'), 'archive')
  assert.equal(fileKind('application/vnd.openxmlformats-officedocument.wordprocessingml.document'), 'document')
  assert.equal(fileKind('', 'notes.PDF'), 'pdf')
  assert.equal(fileKind('application/octet-stream', 'archive.tar'), 'archive')
  assert.equal(fileKind('', 'photo.png'), 'file', 'an image by name only is not drawn')
  assert.equal(fileKind('', 'README'), 'file')
})
