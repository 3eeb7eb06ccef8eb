import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import test from 'node:test'
import { testsFor } from './test-changed.ts'

test('changed files map to the test files of their folder, package, script or docs', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'atrium-changed-'))
  t.after(() => rm(root, { recursive: true, force: true }))
  const files = [
    'packages/gateway/src/auth/a.test.ts',
    'packages/gateway/src/auth/deeper/b.test.ts',
    'packages/gateway/src/proxy/c.test.ts',
    'packages/chat/src/d.test.ts',
    'packages/chat/src/messages/e.test.ts',
    'scripts/build.test.ts',
    'scripts/docs.test.ts',
    'scripts/start.test.ts',
  ]
  for (const file of files) {
    await mkdir(join(root, dirname(file)), { recursive: true })
    await writeFile(join(root, file), '')
  }
  const mapped = (changed: string[]) => testsFor(changed, root)

  assert.deepEqual(mapped(['packages/gateway/src/auth/csrf.ts']).tests, [
    'packages/gateway/src/auth/a.test.ts',
    'packages/gateway/src/auth/deeper/b.test.ts',
  ])
  assert.deepEqual(mapped(['packages/gateway/src/proxy/c.test.ts']).tests, ['packages/gateway/src/proxy/c.test.ts'])
  // A package's top-level source and its test helpers reach every test of the package.
  assert.deepEqual(mapped(['packages/chat/src/app.ts']).tests, [
    'packages/chat/src/d.test.ts',
    'packages/chat/src/messages/e.test.ts',
  ])
  assert.deepEqual(mapped(['packages/chat/test/support.ts']).tests, mapped(['packages/chat/src/app.ts']).tests)
  assert.deepEqual(mapped(['scripts/build.ts']).tests, ['scripts/build.test.ts'])
  assert.deepEqual(mapped(['scripts/supervisor.ts']).tests, [
    'scripts/build.test.ts',
    'scripts/docs.test.ts',
    'scripts/start.test.ts',
  ])
  assert.deepEqual(mapped(['docs/gateway.md']).tests, ['scripts/docs.test.ts'])
  // A deleted test file is not run; the root's settings name no test.
  assert.deepEqual(mapped(['packages/gateway/src/auth/gone.test.ts', 'biome.json']), {
    tests: [],
    unmapped: ['biome.json'],
  })
})
