import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { type DatabaseDialect, timetickNode } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, json, listen } from '@atrium/platform/testing'
import webPush from 'web-push'
import { type DnsAnswer, startDnsPeer } from '../../test/dns-peer.ts'
import { SERVICE_SECRET } from '../../test/support.ts'
import { buildGateway } from '../app.ts'
import { apiKeyParts } from '../auth/api-keys.repository.ts'
import { CLI_NODE_NUMBER, loadGatewayConfig } from '../config.ts'
import { runCli } from './cli.ts'

const LAUNCHER = fileURLToPath(new URL('./atrium.mjs', import.meta.url))
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url))
const NODE = join(ROOT, 'node_modules', '.bin', 'node')

interface Run {
  code: number
  stdout: string
  stderr: string
}

/** Runs the CLI as a child process, like `npx atrium …`, with only the given environment. */
function atrium(args: string[], env: Record<string, string>, node = NODE): Promise<Run> {
  return new Promise((resolve) => {
    execFile(node, [LAUNCHER, ...args], { env: { PATH: process.env.PATH ?? '', ...env } }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
      resolve({ code, stdout, stderr })
    })
  })
}

async function setup(t: TestContext, dialect: DatabaseDialect) {
  const zone = new Map<string, DnsAnswer>()
  const dns = await startDnsPeer(t, zone)
  const env = {
    GatewayDB: await createTestDatabaseUrl(t, dialect),
    ServiceSecret: SERVICE_SECRET,
    Modules: JSON.stringify({ chat: 'http://127.0.0.1:9' }),
    Dns__Servers: JSON.stringify([dns.server]),
    Dns__TimeoutMs: '300',
    Dns__Tries: '1',
  }
  const run = (...args: string[]) => atrium(args, env)
  // The same entry point in this process: for the many refusal cases, where a process per case would be slow.
  const runHere = async (...args: string[]): Promise<Run> => {
    let stdout = ''
    let stderr = ''
    const code = await runCli(args, env, {
      out: (text) => (stdout += `${text}\n`),
      err: (text) => (stderr += `${text}\n`),
    })
    return { code, stdout, stderr }
  }
  const runJson = async (...args: string[]) => {
    const result = await run(...args, '--json')
    assert.equal(result.code, 0, `atrium ${args.join(' ')}: ${result.stderr}`)
    return JSON.parse(result.stdout)
  }
  return { env, zone, run, runHere, runJson }
}

forEachDialect('a newcomer creates the first admin, an app and keys that the gateway accepts', async (t, dialect) => {
  const { env, run, runHere, runJson } = await setup(t, dialect)

  const admin = await runJson(
    ...['user', 'create', '--email', 'Admin@Example.com', '--phone', '+1 650 555 0100'],
    ...['--name', 'Admin', '--scopes', 'admin'],
  )
  assert.deepEqual(admin.scopes, ['admin'])
  assert.deepEqual(admin.emails, ['admin@example.com'])
  assert.equal(admin.phones.length, 1)
  // The CLI writes ids with its own node number, so they never collide with a running gateway's.
  assert.equal(timetickNode(Number(admin.crmId)), CLI_NODE_NUMBER)
  assert.throws(
    () =>
      loadGatewayConfig({ GatewayDB: env.GatewayDB, ServiceSecret: SERVICE_SECRET, NodeNumber: CLI_NODE_NUMBER }, {}),
    /NodeNumber: 31 is reserved for the atrium CLI/,
  )

  const config = loadGatewayConfig({ GatewayDB: env.GatewayDB, ServiceSecret: SERVICE_SECRET }, {})
  const [shop, issued, gateway] = await Promise.all([
    runJson(
      ...['app', 'create', '--name', 'Shop', '--owner', admin.crmId, '--flags', 'AppAuthAndCORS'],
      ...['--origins', 'https://shop.example', '--callback', 'https://shop.example/hook', '--events', 'chat_mess'],
    ),
    runJson('key', 'issue', '--user', admin.crmId, '--name', 'deploy', '--scopes', 'admin'),
    // The gateway, on the same database, accepts what the CLI writes.
    buildGateway(config),
  ])
  assert.equal(shop.app.flags, 1)
  assert.deepEqual(shop.app.origins, ['https://shop.example'])
  assert.match(issued.key, /^atr_/)
  const url = await listen(t, gateway)
  const domains = await fetch(`${url}/auth/v1/domains`, { headers: { authorization: `Bearer ${issued.key}` } })
  assert.equal(domains.status, 200, JSON.stringify(await json(domains.clone())))
  assert.ok(await gateway.store.apps.verify(Number(shop.app.id), shop.secret))
  const contacts = await gateway.store.users.contactsOf(Number(admin.crmId))
  assert.deepEqual(
    contacts.map((contact) => contact.flags),
    [3, 3],
    'ManuallyAdded | Verified',
  )

  // Contacts by hand: added (Verified unless --unverified), refused when malformed or someone's, removed.
  const added = JSON.parse(
    (await runHere('contact', 'add', admin.crmId, 'Ops@Example.com', '--unverified', '--json')).stdout,
  )
  assert.deepEqual([added.contact, added.verified], ['ops@example.com', false])
  const owned = await runHere('contact', 'add', admin.crmId, 'ADMIN@example.com')
  assert.equal(owned.code, 2, owned.stderr)
  assert.match(owned.stderr, /admin@example\.com belongs to this user already/)
  const malformed = await runHere('contact', 'add', admin.crmId, 'not-an-address')
  assert.equal(malformed.code, 1, malformed.stderr)
  assert.match(malformed.stderr, /is neither an email address nor a phone number/)
  const removed = await runHere('contact', 'remove', admin.crmId, 'ops@example.com', '--json')
  assert.equal(JSON.parse(removed.stdout).removed, 'ops@example.com')
  const gone = await runHere('contact', 'remove', admin.crmId, 'ops@example.com')
  assert.equal(gone.code, 2, gone.stderr)
  assert.deepEqual(
    (await gateway.store.users.contactsOf(Number(admin.crmId))).map((contact) => contact.value),
    contacts.map((contact) => contact.value),
  )

  // Lists never show secrets; revocation is reported and final.
  const [revoked, listed, apps] = [
    await run('key', 'revoke', issued.apiKey.id),
    await runHere('key', 'list'),
    await runHere('app', 'list'),
  ]
  assert.equal(revoked.code, 0, revoked.stderr)
  assert.ok(!listed.stdout.includes(apiKeyParts(issued.key)!.secret))
  assert.match(apps.stdout, /Shop\s+\d+\s+AppAuthAndCORS\s+https:\/\/shop\.example/)
  // An update changes only what it names; an empty --callback stops the webhooks.
  const update = await runHere(
    'app',
    'update',
    shop.app.id,
    '--events',
    'NewChatMessage,ChatCreated',
    '--flags',
    '',
    '--json',
  )
  assert.equal(update.code, 0, update.stderr)
  const updated = JSON.parse(update.stdout)
  assert.deepEqual(
    { events: updated.app.eventTypes, flags: updated.app.flags, callback: updated.app.callbackUrl },
    { events: ['NewChatMessage', 'ChatCreated'], flags: 0, callback: 'https://shop.example/hook' },
  )
  assert.deepEqual(updated.app.origins, ['https://shop.example'])
  assert.equal((await runHere('app', 'update', shop.app.id, '--callback', '')).code, 0)
  assert.deepEqual(await gateway.store.apps.withWebhooks(), [])
  for (const [args, code, message] of [
    [[shop.app.id], 1, /nothing to change/],
    [[shop.app.id, '--callback', 'ftp://x.example'], 1, /must be http\(s\)/],
    [['12345', '--name', 'x'], 2, /no app 12345/],
  ] as const) {
    const refused = await runHere('app', 'update', ...args)
    assert.equal(refused.code, code, refused.stderr)
    assert.match(refused.stderr, message)
  }
  assert.ok(!apps.stdout.includes(shop.secret))
  const again = await runHere('key', 'revoke', issued.apiKey.id)
  assert.equal(again.code, 2)
  assert.match(again.stderr, /no active key/)
  const service = await runHere('key', 'issue', '--app', shop.app.id, '--json')
  assert.equal(JSON.parse(service.stdout).apiKey.keyType, 'service')
  const keys = JSON.parse((await runHere('key', 'list', '--json')).stdout).keys as { id: string; revoked: number }[]
  assert.ok(keys.find((key) => key.id === issued.apiKey.id)!.revoked > 0)

  assert.equal((await runHere('user', 'scopes', admin.crmId, 'admin,chat')).code, 0)
  const users = JSON.parse((await runHere('user', 'list', '--json')).stdout).users
  assert.deepEqual(users[0].scopes, ['admin', 'chat'])
  const taken = await runHere('user', 'create', '--email', 'admin@EXAMPLE.com')
  assert.equal(taken.code, 2)
  assert.match(taken.stderr, /already belongs to user/)
  assert.equal(JSON.parse((await runHere('user', 'list', '--json')).stdout).users.length, 1)
})

forEachDialect('routes and project domains are managed from the CLI', async (t, dialect) => {
  const { zone, run, runHere, runJson } = await setup(t, dialect)

  const [added, domain] = await Promise.all([
    runJson('route', 'add', '/shop', 'chat', '--flags', 'AppAuthAndCORS,RequireSession'),
    run('domain', 'add', 'Example.COM'),
  ])
  assert.deepEqual([added.route.prefix, added.route.upstream, added.route.flags], ['/shop/', 'chat', 3])
  const duplicate = await runHere('route', 'add', '/shop/', 'chat')
  assert.equal(duplicate.code, 2)
  assert.match(duplicate.stderr, /already exists/)
  assert.equal((await runHere('route', 'add', '/auth/x/', 'chat')).code, 2)
  assert.equal((await runHere('route', 'add', '/x/', 'unknown-module')).code, 2)
  assert.match((await runHere('route', 'list')).stdout, /\/shop\/\s+chat\s+AppAuthAndCORS,RequireSession/)

  assert.equal(domain.code, 0, domain.stderr)
  const record = /_atrium-challenge\.example\.com\. TXT "(atrium-verification=[^"]+)"/.exec(domain.stdout)
  assert.ok(record, domain.stdout)
  const missing = await runHere('domain', 'verify', 'example.com')
  assert.equal(missing.code, 2)
  assert.match(missing.stderr, /not verified: no TXT record at _atrium-challenge\.example\.com/)
  zone.set('_atrium-challenge.example.com', [['atrium-verification=wrong']])
  assert.match((await runHere('domain', 'verify', 'example.com')).stderr, /does not hold/)
  zone.set('_atrium-challenge.example.com', [[record[1]!]])

  const [verified, removed] = await Promise.all([
    run('domain', 'verify', 'example.com'),
    run('route', 'remove', '/shop/'),
  ])
  assert.equal(verified.code, 0, verified.stderr)
  assert.match(verified.stdout, /verified/)
  assert.equal(removed.code, 0, removed.stderr)
  assert.deepEqual(JSON.parse((await runHere('route', 'list', '--json')).stdout).routes, [])
  assert.equal((await runHere('route', 'remove', '/shop/')).code, 2)
  const [listed] = JSON.parse((await runHere('domain', 'list', '--json')).stdout).domains
  assert.equal(listed.state, 'verified')
  const bad = await runHere('domain', 'add', 'not a domain')
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /Not a valid domain name/)
})

forEachDialect('bad usage exits 1 with the usage, failures exit 2', async (t, dialect) => {
  const { env, run, runHere } = await setup(t, dialect)
  const [unknown, badConfig] = await Promise.all([
    run('frobnicate'),
    atrium(['user', 'list'], { ...env, ServiceSecret: 'short' }),
  ])
  assert.equal(unknown.code, 1)
  assert.match(unknown.stderr, /unknown command "frobnicate"/)
  assert.equal(badConfig.code, 2)
  assert.match(badConfig.stderr, /ServiceSecret/)
  assert.ok(!badConfig.stderr.includes('short'))
  // `npm start` makes a secret per run: commands work without one, `config` shows it empty.
  const { ServiceSecret: _, ...withoutSecret } = env
  const [listed, config] = [
    await runCli(['user', 'list'], withoutSecret, { out: () => {}, err: () => {} }),
    await atrium(['config'], withoutSecret),
  ]
  assert.equal(listed, 0)
  assert.equal(config.code, 0, config.stderr)
  assert.equal(JSON.parse(config.stdout).ServiceSecret, '')

  const cases = [
    await runHere(),
    await runHere('user', 'scopes', '1'),
    await runHere('user', 'create', '--nope'),
    await runHere('key', 'issue', '--user', '1', '--app', '2'),
    await runHere('key', 'revoke', 'abc'),
    await runHere('route', 'add', '/x/', 'chat', '--flags', 'Bogus'),
    await runHere('user', 'create', '--email', 'not-an-email'),
    await runHere('app', 'create', '--name', 'x', '--owner', '1', '--origins', 'https://a.example/path'),
  ]
  for (const result of cases) assert.equal(result.code, 1, result.stderr)
  assert.match(cases[0]!.stdout, /Usage: atrium <command>/)
  assert.match(cases[1]!.stderr, /Usage: atrium user scopes <crmId> <scopes>/)
  assert.match(cases[2]!.stderr, /Unknown option '--nope'/)
  assert.match(cases[5]!.stderr, /unknown flag "Bogus"/)

  const failures = [
    await runHere('user', 'scopes', '12345', 'admin'),
    await runHere('app', 'create', '--name', 'x', '--owner', '12345'),
    await runHere('key', 'issue', '--user', '12345'),
  ]
  for (const result of failures) assert.equal(result.code, 2, result.stderr)
  assert.match(failures[0]!.stderr, /no user 12345/)
  assert.equal(JSON.parse((await runHere('user', 'list', '--json')).stdout).users.length, 0, 'nothing written')
  const help = await runHere('help')
  assert.equal(help.code, 0)
  for (const name of ['user create', 'app create', 'key issue', 'route add', 'domain verify', 'config']) {
    assert.ok(help.stdout.includes(`atrium ${name}`), name)
  }
})

test('config prints the effective settings with secrets redacted', async (t) => {
  const vapid = webPush.generateVAPIDKeys()
  const dir = await mkdtemp(join(tmpdir(), 'atrium-cli-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'atrium.json')
  await writeFile(
    file,
    JSON.stringify({
      gateway: {
        GatewayDB: 'postgres://atrium:hunter2-db-password@db.internal:5432/gateway',
        ServiceSecret: 'file-service-secret-that-is-long-enough-000',
        WebPush: {
          Enabled: true,
          PublicKey: vapid.publicKey,
          PrivateKey: vapid.privateKey,
          Subject: 'mailto:a@b.example',
        },
        Port: 8443,
      },
      chat: { Whatever: true },
    }),
  )
  const result = await atrium(['config'], { ATRIUM_CONFIG: file, Port: '9090' })
  assert.equal(result.code, 0, result.stderr)
  for (const secret of ['hunter2-db-password', 'file-service-secret', vapid.privateKey]) {
    assert.ok(!result.stdout.includes(secret), secret)
  }
  const config = JSON.parse(result.stdout)
  assert.equal(config.ServiceSecret, '[redacted]')
  assert.equal(config.WebPush.PrivateKey, '[redacted]')
  assert.equal(config.WebPush.PublicKey, vapid.publicKey)
  assert.equal(config.GatewayDB, 'postgres://atrium:%5Bredacted%5D@db.internal:5432/gateway')
  assert.equal(config.Port, 9090, 'the environment wins over the file, as in the gateway')
  assert.equal(config.Dns.TimeoutMs, 5000)
})

test('webpush keys prints a fresh VAPID key pair that the gateway accepts', async () => {
  const [first, second] = await Promise.all([
    atrium(['webpush', 'keys', '--json'], {}),
    atrium(['webpush', 'keys'], {}),
  ])
  assert.equal(first.code, 0, first.stderr)
  const { publicKey, privateKey } = JSON.parse(first.stdout)
  assert.equal(Buffer.from(publicKey, 'base64url').length, 65)
  assert.equal(Buffer.from(privateKey, 'base64url').length, 32)
  assert.match(second.stdout, /^WebPush__PublicKey=[A-Za-z0-9_-]{87}\nWebPush__PrivateKey=[A-Za-z0-9_-]{43}\n/)
  assert.ok(!second.stdout.includes(publicKey), 'every run makes a new pair')

  const webPushSettings = (keys: object) => ({
    ServiceSecret: SERVICE_SECRET,
    WebPush: { Enabled: true, Subject: 'mailto:ops@example.com', ...keys },
  })
  const config = loadGatewayConfig(webPushSettings({ PublicKey: publicKey, PrivateKey: privateKey }), {})
  assert.equal(config.WebPush.PrivateKey, privateKey)
  const other = webPush.generateVAPIDKeys()
  assert.throws(
    () => loadGatewayConfig(webPushSettings({ PublicKey: publicKey, PrivateKey: other.privateKey }), {}),
    /WebPush\.PrivateKey: does not belong to WebPush\.PublicKey/,
  )
  assert.throws(
    () => loadGatewayConfig(webPushSettings({ PublicKey: 'public-vapid-key', PrivateKey: privateKey }), {}),
    /WebPush\.PublicKey: not a base64url P-256 public key/,
  )
})

const OLD_NODE = '/usr/bin/node'
const oldNodeSkip =
  existsSync(OLD_NODE) && !execFileSync(OLD_NODE, ['-p', 'process.versions.node']).toString().startsWith('24.')
    ? false
    : 'no Node other than 24 on this machine'

test('under another Node the launcher re-executes the project Node, or refuses clearly', {
  skip: oldNodeSkip,
}, async () => {
  const help = await atrium(['help'], {}, OLD_NODE)
  assert.equal(help.code, 0, help.stderr)
  assert.match(help.stdout, /Usage: atrium/)
  const refused = await atrium(['help'], { ATRIUM_CLI_REEXEC: '1' }, OLD_NODE)
  assert.equal(refused.code, 2)
  assert.match(refused.stderr, /Node\.js 24 is required/)
})
