import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { test } from 'node:test'
import { json } from './testing/http.ts'

async function startSlowService() {
  const child = spawn(process.execPath, [new URL('../test/slow-service.ts', import.meta.url).pathname], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string]
  return { child, base: `http://127.0.0.1:${JSON.parse(line).port}` }
}

test('SIGTERM lets in-flight requests finish, refuses new connections, and exits 0', async () => {
  const { child, base } = await startSlowService()
  const exited = once(child, 'exit')
  const inFlight = fetch(`${base}/slow?ms=600`)
  await new Promise((resolve) => setTimeout(resolve, 150))
  child.kill('SIGTERM')
  await new Promise((resolve) => setTimeout(resolve, 100))

  await assert.rejects(fetch(`${base}/health`), 'the listener is closed after the signal')
  const response = await inFlight
  assert.equal(response.status, 200)
  assert.deepEqual((await json(response)).result, { waited: 600 })
  const [code] = await exited
  assert.equal(code, 0)
})
