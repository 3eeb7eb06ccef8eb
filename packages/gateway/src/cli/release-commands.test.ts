import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readlink, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { appliedMigrations, columnType, createDatabase, migrateToLatest, notNullDefault } from '@atrium/platform'
import { pointCurrent, type ReleaseManifest } from '@atrium/platform/releases'
import { createTestDatabaseUrl, forEachDialect } from '@atrium/platform/testing'
import { runCli } from './cli.ts'

/** A dist directory with manifests of the given chat versions (the bundles themselves are not needed here). */
async function distWith(t: TestContext, builds: Array<{ version: string; migration: string }>, active?: string) {
  const dist = await mkdtemp(join(tmpdir(), 'atrium-releases-'))
  t.after(() => rm(dist, { recursive: true, force: true }))
  for (const { version, migration } of builds) {
    const manifest: ReleaseManifest = {
      process: 'chat',
      version,
      domain: 'example.test',
      builtAt: '2026-11-26T10:00:00.000Z',
      commit: 'a'.repeat(40),
      schema: { setting: 'ChatDB', migration },
    }
    await mkdir(join(dist, 'chat', version), { recursive: true })
    await writeFile(join(dist, 'chat', version, 'manifest.json'), JSON.stringify(manifest))
  }
  if (active) await pointCurrent(dist, 'chat', active)
  return dist
}

async function atrium(args: string[], env: Record<string, string> = {}) {
  let stdout = ''
  let stderr = ''
  const code = await runCli(args, env, { out: (text) => (stdout += text), err: (text) => (stderr += text) })
  return { code, stdout, stderr }
}

const BUILDS = [
  { version: '1.10.0', migration: '0002-topic' },
  { version: '1.2.0', migration: '0001-initial' },
]

test('release list shows each build by version, the active one marked', async (t) => {
  const dist = await distWith(t, BUILDS, '1.2.0')
  const text = await atrium(['release', 'list', '--dist', dist])
  assert.equal(text.code, 0, text.stderr)
  const rows = text.stdout.split('\n').slice(1)
  // Semantic order: 1.2.0 before 1.10.0.
  assert.match(
    rows[0]!,
    /^chat\s+1\.2\.0\s+active\s+2026-11-26T10:00:00\.000Z\s+a{12}\s+ChatDB 0001-initial\s+example\.test$/,
  )
  assert.match(rows[1]!, /^chat\s+1\.10\.0\s+2026-11-26T10:00:00\.000Z\s+a{12}\s+ChatDB 0002-topic\s+example\.test$/)
  const listed = JSON.parse((await atrium(['release', 'list', '--json'], { ATRIUM_DIST: dist })).stdout)
  assert.equal(listed.processes[0].process, 'chat')
  assert.equal(listed.processes[0].active, '1.2.0')
  assert.deepEqual(
    listed.processes[0].builds.map((build: ReleaseManifest) => build.version),
    ['1.2.0', '1.10.0'],
  )
  const empty = await distWith(t, [])
  assert.match((await atrium(['release', 'list', '--dist', empty])).stdout, /^no builds in .*npm run build/)
})

test('release activate refuses a bad name, a bad version and a build that does not exist', async (t) => {
  const dist = await distWith(t, BUILDS, '1.2.0')
  const process = await atrium(['release', 'activate', '../chat', '1.2.0', '--dist', dist])
  assert.equal(process.code, 1)
  assert.match(process.stderr, /invalid process name "\.\.\/chat"/)
  const version = await atrium(['release', 'activate', 'chat', 'latest', '--dist', dist])
  assert.equal(version.code, 1)
  assert.match(version.stderr, /invalid version "latest": give a semantic version such as 1\.2\.0/)
  const missing = await atrium(['release', 'activate', 'chat', '2.0.0', '--dist', dist])
  assert.equal(missing.code, 2)
  assert.match(missing.stderr, /no build chat 2\.0\.0 in .* \(its builds: 1\.2\.0, 1\.10\.0\)/)
  const unset = await atrium(['release', 'activate', 'chat', '1.10.0', '--dist', dist])
  assert.equal(unset.code, 2)
  assert.match(
    unset.stderr,
    /set ChatDB \(environment, or the "chat" section of the ATRIUM_CONFIG file\) or pass --database/,
  )
  const nowhere = await atrium([
    'release',
    'activate',
    'chat',
    '1.10.0',
    '--dist',
    dist,
    '--database',
    'sqlite:no/such.db',
  ])
  assert.equal(nowhere.code, 2)
  assert.match(nowhere.stderr, /ChatDB names sqlite:no\/such\.db, which does not exist/)
  assert.equal(await readlink(join(dist, 'chat', 'current')), '1.2.0')
})

forEachDialect(
  "release activate checks the build's schema need against the database named in the config file",
  async (t, dialect) => {
    const dist = await distWith(t, BUILDS, '1.2.0')
    const url = await createTestDatabaseUrl(t, dialect)
    const config = join(dist, 'atrium.json')
    await writeFile(config, JSON.stringify({ chat: { ChatDB: url } }))
    const env = { ATRIUM_CONFIG: config }

    // An empty database (the SQLite file exists once opened).
    const chatDb = createDatabase(url)
    t.after(() => chatDb.destroy())
    await appliedMigrations(chatDb)
    const fresh = await atrium(['release', 'activate', 'chat', '1.10.0', '--dist', dist], env)
    assert.equal(fresh.code, 2)
    assert.match(
      fresh.stderr,
      /refused: chat 1\.10\.0 needs the ChatDB schema at migration 0002-topic, but the database has no migrations applied/,
    )

    await migrateToLatest(chatDb, {
      '0001-initial': {
        up: (db) => db.schema.createTable('chats').addColumn('id', columnType.id, notNullDefault(0)).execute(),
      },
    })
    const behind = await atrium(['release', 'activate', 'chat', '1.10.0', '--dist', dist], env)
    assert.equal(behind.code, 2)
    assert.match(behind.stderr, /but the database is at 0001-initial\. To upgrade, activate it with --migrate/)
    assert.equal(await readlink(join(dist, 'chat', 'current')), '1.2.0')

    const migrate = await atrium(['release', 'activate', 'chat', '1.10.0', '--dist', dist, '--migrate'], env)
    assert.equal(migrate.code, 0, migrate.stderr)
    assert.match(
      migrate.stdout,
      /^chat: 1\.2\.0 -> 1\.10\.0\nIt applies its migrations up to 0002-topic as it starts\./,
    )
    assert.equal(await readlink(join(dist, 'chat', 'current')), '1.10.0')

    // Back to 1.2.0: its need, 0001-initial, is applied; the environment wins over the file.
    const back = await atrium(['release', 'activate', 'chat', '1.2.0', '--dist', dist, '--json'], {
      ...env,
      ChatDB: url,
    })
    assert.equal(back.code, 0, back.stderr)
    assert.deepEqual(
      { ...JSON.parse(back.stdout), build: undefined },
      { process: 'chat', version: '1.2.0', previous: '1.10.0', changed: true, build: undefined },
    )
    assert.equal(await readlink(join(dist, 'chat', 'current')), '1.2.0')
    const again = await atrium(['release', 'activate', 'chat', '1.2.0', '--dist', dist, '--database', url])
    assert.equal(again.stdout, 'chat 1.2.0 is already active')
  },
)
