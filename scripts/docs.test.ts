import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { errorCodes } from '@atrium/platform'
import { generatedDocs } from './docs.ts'

test('generated reference docs are current (run `npm run docs` after changing settings or codes)', () => {
  for (const [path, expected] of Object.entries(generatedDocs())) {
    const committed = readFileSync(new URL(`../${path}`, import.meta.url), 'utf8')
    assert.equal(committed, expected, `${path} is out of date`)
  }
})

test('error codes are unique, in their ranges, and each has an HTTP error status', () => {
  const codes = Object.values(errorCodes).map((definition) => definition.code)
  assert.equal(new Set(codes).size, codes.length)
  for (const [name, { code, status, meaning }] of Object.entries(errorCodes)) {
    assert.ok(code >= 1000 && code < 5000, `${name} code ${code} is outside 1000..4999`)
    assert.ok(status >= 400 && status < 600, `${name} status ${status}`)
    assert.ok(meaning.length > 0, `${name} has no meaning`)
  }
})
