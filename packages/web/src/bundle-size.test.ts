import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { gzipSync } from 'node:zlib'
import { buildClient, CLIENT_MOUNT } from '../build-client.ts'

/** Budget of issue 6: the JavaScript /chat/ loads before it can render, gzip-compressed. */
const INITIAL_JS_BUDGET = 60 * 1024

test('the JavaScript /chat/ loads at start stays within 60 KB gzip', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'atrium-web-size-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  await buildClient(dir)
  const index = await readFile(join(dir, 'index.html'), 'utf8')
  // The start-up script, the entry and the chunks Vite preloads with it are what the first render waits for.
  const initial = [...index.matchAll(/<(?:script|link rel="modulepreload")[^>]*(?:src|href)="([^"]+)"/g)]
    .map((match) => match[1]!)
    .filter((path) => path.startsWith(CLIENT_MOUNT))
  assert.ok(initial.length > 0, index)
  let gzipped = 0
  for (const path of initial)
    gzipped += gzipSync(await readFile(join(dir, path.slice(CLIENT_MOUNT.length))), { level: 9 }).length
  t.diagnostic(`initial JavaScript: ${initial.length} file(s), ${(gzipped / 1024).toFixed(1)} KB gzip`)
  assert.ok(gzipped <= INITIAL_JS_BUDGET, `${gzipped} bytes gzip exceed the budget of ${INITIAL_JS_BUDGET}`)
})
