import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import test from 'node:test'
import { promisify } from 'node:util'
import { kindOf, packageOf, renderTiming } from './test-timing.ts'

const REPORTER = join(import.meta.dirname, 'test-timing.ts')

test('a test file is a browser, system, database or unit test by what it imports and runs', () => {
  assert.equal(kindOf('packages/web/src/e2e/files.test.ts', ''), 'browser')
  assert.equal(
    kindOf('packages/gateway/src/auth/x.test.ts', "import { launchBrowser } from '../../../web/src/e2e/system.ts'"),
    'browser',
  )
  assert.equal(kindOf('scripts/start.test.ts', "import { startSystem } from './started-system.ts'"), 'system start')
  assert.equal(kindOf('scripts/x.test.ts', "import { spawn } from 'node:child_process'"), 'system start')
  assert.equal(kindOf('packages/chat/src/a.test.ts', "forEachDialect('…', async (t, dialect) => {})"), 'database')
  assert.equal(kindOf('packages/chat/src/b.test.ts', 'const url = await createTestDatabaseUrl(t, dialect)'), 'database')
  // Words in strings or comments are not what the file does.
  assert.equal(
    kindOf('packages/platform/src/ids.test.ts', "test('no launchBrowser or forEachDialect( here', () => {})"),
    'unit',
  )
  assert.equal(packageOf('packages/gateway/src/auth/x.test.ts'), 'gateway')
  assert.equal(packageOf('scripts/start.test.ts'), 'scripts')
})

test('the report lists the slowest files first and sums by package and kind', () => {
  const files = [
    { path: 'packages/chat/src/a.test.ts', seconds: 2, passed: true },
    { path: 'packages/chat/src/b.test.ts', seconds: 30, passed: false },
    { path: 'packages/web/src/e2e/c.test.ts', seconds: 10, passed: true },
    ...Array.from({ length: 25 }, (_, index) => ({ path: `scripts/s${index}.test.ts`, seconds: 0.1, passed: true })),
  ]
  const sources: Record<string, string> = { 'packages/chat/src/a.test.ts': "forEachDialect('a', async () => {})" }
  const lines = renderTiming(files, 20, (path) => sources[path] ?? '')
  assert.equal(lines[1], 'Test time: 28 files, 44.5 s of file time in 20.0 s of wall-clock time')
  assert.equal(lines[2], 'The 20 slowest files:')
  assert.deepEqual(lines.slice(3, 6), [
    '     30.0 s  packages/chat/src/b.test.ts (unit) FAILED',
    '     10.0 s  packages/web/src/e2e/c.test.ts (browser)',
    '      2.0 s  packages/chat/src/a.test.ts (database)',
  ])
  const rest = lines.slice(23)
  assert.deepEqual(rest, [
    'By package:',
    '     32.0 s  chat (2 files)',
    '     10.0 s  web (1 file)',
    '      2.5 s  scripts (25 files)',
    'By kind:',
    '     32.5 s  unit (26 files)',
    '     10.0 s  browser (1 file)',
    '      2.0 s  database (1 file)',
  ])
})

test('a real run ends with the report of its files, from the runner’s own events', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'atrium-timing-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  await writeFile(
    join(dir, 'slow.test.ts'),
    "import test from 'node:test'\ntest('waits', () => new Promise((r) => setTimeout(r, 700)))\n",
  )
  await writeFile(
    join(dir, 'quick.test.ts'),
    "import test from 'node:test'\ntest('passes', () => {})\ntest('is skipped', { skip: true }, () => {})\n",
  )
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--test', `--test-reporter=${REPORTER}`, '--test-reporter-destination=stdout', '*.test.ts'],
    // Without the runner's NODE_TEST_CONTEXT, which would make the inner run report to this one.
    { cwd: dir, env: { ...process.env, NODE_TEST_CONTEXT: undefined } },
  )
  const lines = stdout.trim().split('\n')
  assert.match(lines[0]!, /^Test time: 2 files, /)
  const listed = lines.slice(2, 4).map((line) => /^\s+([\d.]+) s {2}(\S+) \(unit\)$/.exec(line))
  assert.deepEqual(
    listed.map((match) => match?.[2]),
    ['slow.test.ts', 'quick.test.ts'],
  )
  assert.ok(Number(listed[0]![1]) >= 0.7, lines[2])
  assert.equal(lines.at(-1), 'Tests: 2 passed, 0 failed, 1 skipped')
})
