import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { runCli } from './cli.ts'

const databases = new WeakMap<TestContext, string>()

/**
 * Runs the CLI in this process with only the given environment and a fresh database per test, as a
 * newcomer runs it (issue 16, item 4).
 */
async function atrium(t: TestContext, args: string[], env: Record<string, string> = {}) {
  let dir = databases.get(t)
  if (!dir) {
    const created = await mkdtemp(join(tmpdir(), 'atrium-cli-first-'))
    databases.set(t, created)
    t.after(() => rm(created, { recursive: true, force: true }))
    dir = created
  }
  let stdout = ''
  let stderr = ''
  const code = await runCli(
    args,
    { GatewayDB: `sqlite:${join(dir, 'gateway.db')}`, ...env },
    {
      out: (text) => (stdout += `${text}\n`),
      err: (text) => (stderr += `${text}\n`),
    },
  )
  return { code, stdout, stderr }
}

test('every --help works: the whole CLI, a command group and one command', async (t) => {
  for (const args of [['--help'], ['user', '--help'], ['user', '-h'], ['webhooks', '--help'], ['app', '--help']]) {
    const result = await atrium(t, args)
    assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`)
    assert.match(result.stdout, /^Usage: atrium/, args.join(' '))
  }
  const group = await atrium(t, ['user', '--help'])
  for (const name of ['user create', 'user scopes', 'user list']) assert.ok(group.stdout.includes(`atrium ${name}`))
  assert.ok(!group.stdout.includes('atrium app create'), 'only the group’s commands')

  // Help wins even over arguments the command would refuse.
  const command = await atrium(t, ['user', 'scopes', '--help'])
  assert.equal(command.code, 0, command.stderr)
  assert.match(command.stdout, /^Usage: atrium user scopes <crmId> <scopes>/)
  const withUnknown = await atrium(t, ['key', 'issue', '--nonsense', '--help'])
  assert.equal(withUnknown.code, 0, withUnknown.stderr)
  assert.match(withUnknown.stdout, /^Usage: atrium key issue/)
})

test('a bare command group lists its commands as a usage error; an unknown word stays unknown', async (t) => {
  const bare = await atrium(t, ['user'])
  assert.equal(bare.code, 1)
  assert.match(bare.stderr, /atrium user create/)
  assert.doesNotMatch(bare.stderr, /unknown command/)
  const unknown = await atrium(t, ['users', '--help'])
  assert.equal(unknown.code, 1)
  assert.match(unknown.stderr, /unknown command "users --help"/)
})

test('config works out of the box, showing an unset ServiceSecret as empty', async (t) => {
  const result = await atrium(t, ['config'])
  assert.equal(result.code, 0, result.stderr)
  const config = JSON.parse(result.stdout)
  assert.equal(config.ServiceSecret, '')
  assert.equal(config.Port, 8080)

  const set = await atrium(t, ['config'], { ServiceSecret: 'x'.repeat(40) })
  assert.equal(JSON.parse(set.stdout).ServiceSecret, '[redacted]')
  const short = await atrium(t, ['config'], { ServiceSecret: 'short' })
  assert.equal(short.code, 2)
  assert.match(short.stderr, /ServiceSecret: must not have fewer than 32 characters/)
})

test('user create refuses a user without an email or phone, who could never sign in', async (t) => {
  const result = await atrium(t, ['user', 'create', '--name', 'Nobody', '--scopes', 'admin'])
  assert.equal(result.code, 1)
  assert.match(result.stderr, /give --email or --phone/)
  assert.match(result.stderr, /Usage: atrium user create --email e \| --phone p/)
  const listed = await atrium(t, ['user', 'list', '--json'])
  assert.deepEqual(JSON.parse(listed.stdout).users, [])
})
