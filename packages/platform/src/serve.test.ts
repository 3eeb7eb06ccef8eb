import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { connect } from 'node:net'
import { createInterface } from 'node:readline'
import { test } from 'node:test'
import { json } from './testing/http.ts'
import { until } from './testing/until.ts'

/** Starts the held service as a child process; `lines` yields what it prints, one JSON object a line. */
async function startHeldService() {
  const child = spawn(process.execPath, [new URL('../test/slow-service.ts', import.meta.url).pathname], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const next = async () => JSON.parse((await lines.next()).value as string)
  const { port } = await next()
  return { child, port, base: `http://127.0.0.1:${port}`, next }
}

/** Whether a new TCP connection to the port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', () => resolve(true))
  })
}

test('SIGTERM lets in-flight requests finish, refuses new connections, and exits 0', async () => {
  const { child, port, base, next } = await startHeldService()
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const inFlight = fetch(`${base}/held`)
  assert.deepEqual(await next(), { held: true })
  child.kill('SIGTERM')

  await until(() => refused(port), 'the listener to close after the signal')
  await assert.rejects(fetch(`${base}/health`), 'the listener is closed after the signal')
  child.stdin.end('release\n')
  const response = await inFlight
  assert.equal(response.status, 200)
  assert.deepEqual((await json(response)).result, { released: true })
  assert.equal(await exited, 0)
})
