import assert from 'node:assert/strict'
import { test } from 'node:test'
import { previewText } from './names.ts'

test("a preview is the message's text, or its file's name when it has no caption", () => {
  assert.equal(previewText({ content: 'See the report', file: null }), 'See the report')
  const file = { id: '7', name: 'report.pdf', size: 10, type: 'application/pdf' }
  assert.equal(previewText({ content: '', file }), '📎 report.pdf')
  assert.equal(previewText({ content: 'Caption', file }), 'Caption')
  assert.equal(previewText({ content: '' }), '📎 Attachment', 'a reply preview names no file')
})
