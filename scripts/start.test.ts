import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { groupAlive, ROOT, type Started, startSystem } from './started-system.ts'

const NODE = join(ROOT, 'node_modules', '.bin', 'node')
const NAMES = ['chat', 'wallet', 'crm', 'gateway']

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

test('npm start prints each sign-in code, by email and by phone, on one line with its link', async (t) => {
  const started = await startSystem(t, NODE, ['scripts/start.ts'])
  const origin = `http://localhost:${started.port}`
  const ask = (path: string, body: object) =>
    fetch(`${origin}/auth/v1/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  assert.equal((await ask('email/start', { email: 'newcomer@example.com' })).status, 200)
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
  process.kill(started.child.pid!, 'SIGTERM')
  await assertAllStopGracefully(started)
})
