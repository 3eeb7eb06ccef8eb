import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { createSocket } from 'node:dgram'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { freePort } from '@atrium/platform/testing'

/** Debian's coturn (apt-get install coturn); the tests start their own, never the system service. */
export const TURNSERVER = '/usr/bin/turnserver'

/** True once something answers a STUN binding request (RFC 8489) on the port. */
async function answersStun(port: number): Promise<boolean> {
  const socket = createSocket('udp4')
  const request = Buffer.alloc(20)
  request.writeUInt16BE(0x0001, 0) // Binding request, no attributes
  request.writeUInt32BE(0x2112a442, 4) // magic cookie
  for (let i = 8; i < 20; i++) request[i] = Math.floor(Math.random() * 256)
  try {
    return await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 200)
      socket.on('message', (message) => {
        clearTimeout(timer)
        resolve(message.readUInt16BE(0) === 0x0101 && message.subarray(8, 20).equals(request.subarray(8, 20)))
      })
      socket.send(request, port, '127.0.0.1')
    })
  } finally {
    socket.close()
  }
}

/**
 * A coturn TURN relay on a loopback UDP port, with the TURN REST shared secret the gateway's
 * Calls.TurnSecret names, stopped when the test ends; or undefined after skipping the test when
 * coturn is not installed (under ATRIUM_REQUIRE_BROWSER=1, as in CI, a missing coturn fails it).
 * Loopback peers are allowed: both browsers of the test are on this machine.
 */
export async function startTurnServer(t: TestContext, secret: string) {
  if (!existsSync(TURNSERVER)) {
    const message = `coturn is not installed at ${TURNSERVER} (apt-get install coturn)`
    if (process.env.ATRIUM_REQUIRE_BROWSER === '1') assert.fail(`${message}; ATRIUM_REQUIRE_BROWSER=1 requires it`)
    t.skip(message)
    return undefined
  }
  const dir = await mkdtemp(join(tmpdir(), 'atrium-coturn-'))
  const port = await freePort({ udp: true })
  const log: string[] = []
  const child: ChildProcess = spawn(
    TURNSERVER,
    [
      '-n',
      '--listening-ip=127.0.0.1',
      '--relay-ip=127.0.0.1',
      `--listening-port=${port}`,
      '--use-auth-secret',
      `--static-auth-secret=${secret}`,
      '--realm=atrium.test',
      '--allow-loopback-peers',
      '--no-tls',
      '--no-dtls',
      '--no-cli',
      '--no-tcp-relay',
      `--userdb=${join(dir, 'turndb')}`,
      `--pidfile=${join(dir, 'turnserver.pid')}`,
      '--log-file=stdout',
      '--simple-log',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  child.stdout?.on('data', (chunk: Buffer) => log.push(chunk.toString()))
  child.stderr?.on('data', (chunk: Buffer) => log.push(chunk.toString()))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  t.after(async () => {
    child.kill('SIGTERM')
    await exited
    await rm(dir, { recursive: true, force: true })
  })
  const deadline = Date.now() + 10_000
  while (!(await answersStun(port))) {
    assert.ok(child.exitCode === null, `turnserver exited: ${log.join('')}`)
    assert.ok(Date.now() < deadline, `turnserver did not answer on ${port}: ${log.join('')}`)
  }
  return { port, url: `turn:127.0.0.1:${port}?transport=udp`, log }
}
