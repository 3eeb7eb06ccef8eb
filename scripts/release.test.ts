/**
 * Issue 23, "Done when": two builds of the chat module from the checkout, the second with an added
 * column; the newer migrates, the older is activated again (a rollback), and the system serves
 * requests on both without losing a message; a build that needs a newer schema is refused.
 */
import assert from 'node:assert/strict'
import { realpathSync } from 'node:fs'
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before } from 'node:test'
import { appliedMigrations, createDatabase, RouteFlags } from '@atrium/platform'
import { activeVersion, currentEntry, readManifest, releaseDir } from '@atrium/platform/releases'
import { createTestDatabaseUrl, forEachDialect, freePort, json, until } from '@atrium/platform/testing'
import { sql } from 'kysely'
import { runCli } from '../packages/gateway/src/cli/cli.ts'
import { SERVICE_SECRET, signedInUser, startGateway } from '../packages/gateway/test/support.ts'
import { buildAll, ROOT } from './build.ts'
import { readCommit, readNeededMigration, readProcessVersion } from './processes.ts'
import { restartOnActivation, supervise, waitHealthy } from './supervisor.ts'

let dir = ''
/** Both chat builds, the older active: each test copies them, so each has its own `current` pointer. */
let builds = ''
let older = ''
let newer = ''
let olderSchema = ''
let newerSchema = ''

/**
 * A copy of the chat package with one more migration (a column on chat_mess) and the next minor
 * version, in a checkout made of links to this one: the repository itself is not touched.
 */
async function newerCheckout(): Promise<string> {
  const root = join(dir, 'checkout')
  await mkdir(join(root, 'packages'), { recursive: true })
  for (const path of ['package.json', 'node_modules', 'packages/platform'])
    await symlink(join(ROOT, path), join(root, path))
  const chat = join(root, 'packages', 'chat')
  await cp(join(ROOT, 'packages', 'chat', 'src'), join(chat, 'src'), { recursive: true })
  const pkg = JSON.parse(await readFile(join(ROOT, 'packages', 'chat', 'package.json'), 'utf8'))
  await writeFile(join(chat, 'package.json'), JSON.stringify({ ...pkg, version: newer }))
  const migrations = join(chat, 'src', 'db', 'migrations')
  await writeFile(
    join(migrations, `${newerSchema}.ts`),
    [
      "import { columnType, notNullDefault } from '@atrium/platform'",
      "import type { Kysely } from 'kysely'",
      '',
      '// biome-ignore lint/suspicious/noExplicitAny: a migration runs against the schema as it was',
      'export async function up(db: Kysely<any>): Promise<void> {',
      "  await db.schema.alterTable('chat_mess').addColumn('release_note', columnType.text, notNullDefault('')).execute()",
      '}',
      '',
    ].join('\n'),
  )
  const index = await readFile(join(migrations, 'index.ts'), 'utf8')
  await writeFile(
    join(migrations, 'index.ts'),
    `import * as releaseNote from './${newerSchema}.ts'\n${index.replace(/\n}\n$/, `\n  '${newerSchema}': releaseNote,\n}\n`)}`,
  )
  return root
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'atrium-release-'))
  builds = join(dir, 'dist')
  older = await readProcessVersion('chat')
  const [major, minor] = older.split('.').map(Number)
  newer = `${major}.${minor! + 1}.0`
  olderSchema = await readNeededMigration('chat')
  newerSchema = `${String(Number(olderSchema.slice(0, 4)) + 1).padStart(4, '0')}-release-note`
  const options = { domain: 'example.test', out: builds, processes: ['chat' as const], client: false }
  await buildAll(options)
  const root = await newerCheckout()
  assert.equal(await readNeededMigration('chat', root), newerSchema)
  await buildAll({ ...options, root })
})
after(() => rm(dir, { recursive: true, force: true }))

/** Runs the `atrium` CLI in this process with the given environment. */
async function atrium(args: string[], env: Record<string, string>) {
  let stdout = ''
  let stderr = ''
  const code = await runCli(args, env, { out: (text) => (stdout += text), err: (text) => (stderr += text) })
  return { code, stdout, stderr }
}

forEachDialect(
  'a rollback to the previous chat build serves every message on the schema the newer build migrated',
  async (t, dialect) => {
    const dist = join(await mkdtemp(join(dir, 'run-')), 'dist')
    await cp(builds, dist, { recursive: true, verbatimSymlinks: true })
    assert.equal(await activeVersion(dist, 'chat'), older, 'the first build is the active one')
    const manifest = async (version: string) => readManifest(releaseDir(dist, 'chat', version))
    assert.deepEqual((await manifest(older)).schema, { setting: 'ChatDB', migration: olderSchema })
    assert.deepEqual((await manifest(newer)).schema, { setting: 'ChatDB', migration: newerSchema })
    // The copy the newer build came from is no git checkout: its manifest names no commit.
    assert.equal((await manifest(older)).commit, await readCommit())
    assert.equal((await manifest(newer)).commit, undefined)

    // The chat module runs its active build under the supervisor `npm start` uses with ATRIUM_DIST.
    const ChatDB = await createTestDatabaseUrl(t, dialect)
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const log: string[] = []
    const chat = supervise({
      name: 'chat',
      // The build `current` points at now, by its real path (as start.ts resolves it).
      entry: () => realpathSync(currentEntry(dist, 'chat')),
      env: { PATH: process.env.PATH, Host: '127.0.0.1', Port: String(port), ChatDB, ServiceSecret: SERVICE_SECRET },
      health: `${base}/private/v1/health`,
      log: (line) => log.push(line),
    })
    t.after(async () => {
      chat.stop('SIGTERM')
      await chat.exited
    })
    await waitHealthy(`${base}/private/v1/health`, Date.now() + 60_000)
    const unwatch = restartOnActivation(chat, dist, (line) => log.push(line), 100)
    t.after(unwatch)

    const gateway = await startGateway(t, dialect, { settings: { Modules: { chat: base } } })
    await gateway.store.routes.add({ prefix: '/msg/', upstream: 'chat', flags: RouteFlags.RequireSession })
    const operator = await signedInUser(gateway)
    await gateway.store.users.setScopes(operator.crmId, ['admin'])
    const alice = await signedInUser(gateway)
    const bob = await signedInUser(gateway)
    const chatVersion = async () => {
      const answer = await json(await fetch(`${gateway.url}/auth/v1/modules`, { headers: operator.headers }))
      return answer.result.modules.find((module: { name: string }) => module.name === 'chat')
    }
    assert.deepEqual(await chatVersion(), {
      name: 'chat',
      status: 'up',
      version: older,
      build: `${older} for example.test`,
    })

    const created = await fetch(`${gateway.url}/msg/v1/create_chat`, {
      method: 'POST',
      headers: alice.headers,
      body: JSON.stringify({ type: 1, peer: String(bob.crmId) }),
    })
    assert.equal(created.status, 200)
    const chatId: string = (await json(created)).result.chat.id
    // Every send is retried until the module takes it (a restart refuses it meanwhile); `sent` holds each once.
    const sent: string[] = []
    async function send(content: string) {
      for (const deadline = Date.now() + 30_000; ; ) {
        assert.ok(Date.now() < deadline, `chat did not take ${content} within 30 s`)
        const answer = await fetch(`${gateway.url}/msg/v1/send_message`, {
          method: 'POST',
          headers: alice.headers,
          body: JSON.stringify({ chat_id: chatId, content }),
        })
        if (answer.status === 200) return void sent.push(content)
        assert.ok([502, 503].includes(answer.status), `${content}: ${answer.status} ${await answer.text()}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    const stored = async () => {
      const answer = await fetch(`${gateway.url}/msg/v1/get_chat_messages?chat_id=${chatId}&limit=100`, {
        headers: bob.headers,
      })
      assert.equal(answer.status, 200)
      return ((await json(answer)).result.messages as Array<{ content: string }>).map((message) => message.content)
    }
    /** Sends one message after another until `done` resolves: the switch happens under traffic. */
    async function sendDuring<T>(label: string, done: Promise<T>): Promise<T> {
      let finished = false
      const result = done.finally(() => (finished = true))
      for (let index = 0; !finished || index < 3; index++) await send(`${label} ${index}`)
      return result
    }
    await send(`on ${older}`)

    // The newer build needs a migration the database does not have: refused, and nothing changes.
    const refused = await atrium(['release', 'activate', 'chat', newer, '--dist', dist], { ChatDB })
    assert.equal(refused.code, 2)
    assert.match(
      refused.stderr,
      new RegExp(
        `refused: chat ${newer} needs the ChatDB schema at migration ${newerSchema}, but the database is at ${olderSchema}\\..*--migrate`,
      ),
    )
    assert.equal(await activeVersion(dist, 'chat'), older)

    // With --migrate it is activated; the supervisor restarts chat on it, which adds the column.
    const upgraded = await sendDuring(
      'upgrading',
      (async () => {
        const run = await atrium(['release', 'activate', 'chat', newer, '--dist', dist, '--migrate'], { ChatDB })
        assert.equal(run.code, 0, run.stderr)
        await until(async () => (await chatVersion()).version === newer, `chat ${newer} to run`, 60_000)
        return run
      })(),
    )
    assert.match(upgraded.stdout, new RegExp(`chat: ${older} -> ${newer}`))
    const database = createDatabase(ChatDB)
    t.after(() => database.destroy())
    assert.equal((await appliedMigrations(database)).at(-1), newerSchema)
    await send(`on ${newer}`)
    assert.deepEqual((await stored()).sort(), [...sent].sort())

    // Rollback: the older build's need (its newest migration) is met by the newer schema.
    await sendDuring(
      'rolling back',
      (async () => {
        const run = await atrium(['release', 'activate', 'chat', older, '--dist', dist], { ChatDB })
        assert.equal(run.code, 0, run.stderr)
        await until(async () => (await chatVersion()).version === older, `chat ${older} to run again`, 60_000)
      })(),
    )
    await send(`on ${older} again`)
    assert.deepEqual((await stored()).sort(), [...sent].sort(), 'every message sent is stored once, none lost')
    assert.ok(sent.includes(`on ${newer}`) && sent.includes(`on ${older} again`))
    // The column the newer build added stays, filled by its default on the older build's rows too.
    const { rows } = await sql<{
      notes: string
    }>`select count(*) as notes from chat_mess where release_note = ''`.execute(database.db)
    assert.ok(Number(rows[0]?.notes) >= sent.length)
    assert.ok(
      log.some((line) => line.includes(`the database schema is newer than this build`) && line.includes(newerSchema)),
      'the older build logs that it runs on a newer schema',
    )
  },
)
