import assert from 'node:assert/strict'
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { pointCurrent } from '@atrium/platform/releases'
import { json } from '@atrium/platform/testing'
import { entryOf, plan, startSettings } from './start.ts'
import { groupAlive, ROOT, type Started, startSystem } from './started-system.ts'

const NODE = join(ROOT, 'node_modules', '.bin', 'node')
const NAMES = ['chat', 'wallet', 'crm', 'payment', 'gateway']

async function assertAllStopGracefully({ child, output }: Started) {
  const deadline = Date.now() + 20_000
  while (groupAlive(child.pid!)) {
    assert.ok(Date.now() < deadline, `processes still running 20 s after the signal:\n${output()}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  for (const name of NAMES) assert.match(output(), new RegExp(`\\[${name}\\] .*stopped`), name)
}

test('SIGINT to the npm start process stops every child gracefully', async (t) => {
  const started = await startSystem(t, 'npm', ['start'])
  process.kill(started.child.pid!, 'SIGINT')
  await assertAllStopGracefully(started)
})

test('SIGTERM to the start script alone stops every child gracefully', async (t) => {
  const started = await startSystem(t, NODE, ['scripts/start.ts'])
  process.kill(started.child.pid!, 'SIGTERM')
  await assertAllStopGracefully(started)
})

test('npm start prints each sign-in code, by email and by phone, on one line with its link; the signed-in person is in the CRM', async (t) => {
  const started = await startSystem(t, NODE, ['scripts/start.ts'])
  const origin = `http://localhost:${started.port}`
  const ask = (path: string, body: object) =>
    fetch(`${origin}/auth/v1/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  const emailStart = await ask('email/start', { email: 'newcomer@example.com' })
  assert.equal(emailStart.status, 200)
  const { challengeId } = (await json(emailStart)).result
  const phone = await ask('phone/start', { phone: '+49 170 1234567' })
  assert.equal(phone.status, 200, await phone.text())

  const deadline = Date.now() + 10_000
  const email = new RegExp(
    `^\\[sign-in\\] newcomer@example\\.com  code \\d{6}  ${origin}/auth/v1/magic\\?token=\\S+$`,
    'm',
  )
  const text = /^\[sign-in\] \+491701234567 {2}code \d{6}$/m
  while (!(email.test(started.output()) && text.test(started.output()))) {
    assert.ok(Date.now() < deadline, `no sign-in lines printed:\n${started.output()}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }

  // Signed in with the code, the person reaches the CRM through /crm/ with the email they proved.
  const code = /^\[sign-in\] newcomer@example\.com {2}code (\d{6})/m.exec(started.output())![1]
  const verified = await ask('email/verify', { challengeId, code })
  assert.equal(verified.status, 200, await verified.clone().text())
  const cookie = verified.headers.getSetCookie()[0]!.split(';')[0]!
  const crmId = (await json(verified)).result.user.crmId
  let info: { result?: { crm_id: string; contacts: unknown[] } } = {}
  while (!info.result) {
    assert.ok(Date.now() < deadline + 10_000, `the CRM never answered user_info:\n${JSON.stringify(info)}`)
    info = await json(await fetch(`${origin}/crm/v1/user_info`, { headers: { cookie } }))
    if (!info.result) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  assert.equal(info.result.crm_id, String(crmId))
  assert.deepEqual(info.result.contacts, [{ kind: 'email', value: 'newcomer@example.com', verified: true }])

  process.kill(started.child.pid!, 'SIGTERM')
  await assertAllStopGracefully(started)
})

test('ATRIUM_PORT leaves room for the five ports after it, which the modules and the mail bridge take', () => {
  assert.equal(startSettings({ ATRIUM_PORT: '65530' }).port, 65_530)
  for (const bad of ['65531', '0', '8080.5', 'http']) {
    assert.throws(() => startSettings({ ATRIUM_PORT: bad }), /from 1 to 65530/, bad)
  }
  const processes = plan({ dataDir: 'data', port: 9000 })
  const ports = Object.fromEntries(processes.map(({ name, env }) => [name, Number(env.Port)]))
  assert.deepEqual(ports, { chat: 9001, wallet: 9002, crm: 9003, payment: 9005, gateway: 9000 })
  const gateway = processes.find(({ name }) => name === 'gateway')!.env
  assert.equal(gateway.MailBridge__Port, '9004')
  assert.equal(JSON.parse(gateway.Modules!).payment, 'http://127.0.0.1:9005')
  assert.deepEqual(
    JSON.parse(gateway.Proxy__Routes!).find((route: { Prefix: string }) => route.Prefix === '/payment/'),
    { Prefix: '/payment/', Upstream: 'payment', Flags: ['RequireSession'] },
  )
  assert.equal(processes.find(({ name }) => name === 'payment')!.env.WalletUrl, 'http://127.0.0.1:9002')
})

test('with ATRIUM_DIST, a process with an active build runs that build and the others their sources', async (t) => {
  const dist = await mkdtemp(join(tmpdir(), 'atrium-start-dist-'))
  t.after(() => rm(dist, { recursive: true, force: true }))
  const build = join(dist, 'chat', '1.4.0')
  await mkdir(build, { recursive: true })
  await writeFile(join(build, 'main.mjs'), '')
  const schema = { setting: 'ChatDB', migration: '0001-initial' }
  const manifest = {
    process: 'chat',
    version: '1.4.0',
    domain: 'example.test',
    builtAt: '2026-11-26T00:00:00Z',
    schema,
  }
  await writeFile(join(build, 'manifest.json'), JSON.stringify(manifest))
  await pointCurrent(dist, 'chat', '1.4.0')

  const settings = startSettings({ ATRIUM_DIST: dist })
  assert.equal(settings.dist, dist)
  const processes = plan(settings)
  const entry = (name: string) => entryOf(processes.find((process) => process.name === name)!, settings.dist)
  // Resolved through `current`, so the supervisor notices when it names another build.
  assert.equal(entry('chat'), await realpath(join(build, 'main.mjs')))
  assert.equal(entry('gateway'), join(ROOT, 'packages/gateway/src/main.ts'))
  assert.equal(entryOf(processes[0]!, undefined), join(ROOT, 'packages/chat/src/main.ts'))
})
