import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const NODE = join(ROOT, 'node_modules', '.bin', 'node')
const NAMES = ['chat', 'wallet', 'crm', 'gateway']

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/** A gateway port whose next three ports are free too, for the modules. */
async function freePortRun(): Promise<number> {
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 40_000)
    const free = await Promise.all([0, 1, 2, 3].map((offset) => portIsFree(base + offset)))
    if (free.every(Boolean)) return base
  }
}

/** Whether any process of the group still runs: signal 0 to the group fails with ESRCH when none does. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

interface Started {
  child: ChildProcess
  port: number
  output: () => string
}

/**
 * Starts the whole system as `npm start` (or the script alone) in a process group of its own, on a
 * temporary data directory and free ports, without building the web client; resolves when it is up.
 */
async function startSystem(t: TestContext, command: string, args: string[]): Promise<Started> {
  const dataDir = await mkdtemp(join(tmpdir(), 'atrium-start-'))
  const port = await freePortRun()
  const child = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ATRIUM_DATA: dataDir, ATRIUM_PORT: String(port), Static__Apps: '{}' },
  })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk))
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk))
  t.after(async () => {
    if (groupAlive(child.pid!)) process.kill(-child.pid!, 'SIGKILL')
    await rm(dataDir, { recursive: true, force: true })
  })
  const deadline = Date.now() + 60_000
  while (!output.includes(`Atrium is running at http://localhost:${port}/`)) {
    assert.ok(Date.now() < deadline && child.exitCode === null, `npm start did not come up:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { child, port, output: () => output }
}

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
