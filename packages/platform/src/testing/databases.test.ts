import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { test } from 'node:test'

// A child Node process registers one dialect pair with forEachDialect and one PostgreSQL-only
// test, with no DATABASE_URL: what it reports is what CI would see with a missing database.
function runWithoutDatabase(env: Record<string, string>) {
  const databases = new URL('./databases.ts', import.meta.url).href
  const script = `
    import { test } from 'node:test'
    const { forEachDialect, onlyWithPostgres, openTestDatabase } = await import(${JSON.stringify(databases)})
    forEachDialect('a dialect pair', () => {})
    test('a PostgreSQL-only test', onlyWithPostgres(), (t) => openTestDatabase(t, 'postgres'))
  `
  // NODE_TEST_CONTEXT would make the child report to this runner instead of printing TAP.
  const { DATABASE_URL: _url, ATRIUM_REQUIRE_POSTGRES: _flag, NODE_TEST_CONTEXT: _context, ...inherited } = process.env
  return spawnSync(process.execPath, ['--test-reporter=tap', '--input-type=module', '-e', script], {
    env: { ...inherited, ...env },
    encoding: 'utf8',
  })
}

test('without DATABASE_URL the PostgreSQL runs are skipped with the reason', () => {
  const run = runWithoutDatabase({})
  assert.equal(run.status, 0, run.stdout + run.stderr)
  assert.match(run.stdout, /ok \d+ - a dialect pair \(postgres\) # SKIP DATABASE_URL not set/)
  assert.match(run.stdout, /ok \d+ - a PostgreSQL-only test # SKIP DATABASE_URL not set/)
  assert.match(run.stdout, /^# pass 1$/m)
})

test('ATRIUM_REQUIRE_POSTGRES=1 turns the PostgreSQL skips into failures that name the flag', () => {
  const run = runWithoutDatabase({ ATRIUM_REQUIRE_POSTGRES: '1' })
  assert.equal(run.status, 1, run.stdout + run.stderr)
  assert.match(run.stdout, /not ok \d+ - a dialect pair \(postgres\)/)
  assert.match(run.stdout, /not ok \d+ - a PostgreSQL-only test/)
  assert.equal(run.stdout.match(/ATRIUM_REQUIRE_POSTGRES=1 requires one/g)?.length, 2)
  assert.match(run.stdout, /^# pass 1$/m)
  assert.match(run.stdout, /^# fail 2$/m)
  assert.match(run.stdout, /^# skipped 0$/m)
})
