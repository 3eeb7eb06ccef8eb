/**
 * The whole system as `npm start` runs it, for tests (scripts/start.test.ts, the web client's
 * first-run browser test): started in a process group of its own, on a temporary data directory
 * and free ports, its output collected.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { freePort } from '@atrium/platform/testing'

export const ROOT = fileURLToPath(new URL('../', import.meta.url))

/** Whether any process of the group still runs: signal 0 to the group fails with ESRCH when none does. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

export interface Started {
  child: ChildProcess
  port: number
  output: () => string
}

/**
 * Starts the whole system as `npm start` (or the script alone) in a process group of its own, on a
 * temporary data directory and free ports; resolves when it is up. `frontends` is `Static__Apps`:
 * `{}` (the default) serves no web client, so nothing is built.
 */
export async function startSystem(
  t: TestContext,
  command: string,
  args: string[],
  frontends: Record<string, string> = {},
): Promise<Started> {
  const dataDir = await mkdtemp(join(tmpdir(), 'atrium-start-'))
  // The modules and the mail bridge take the next five ports.
  const port = await freePort({ run: 6 })
  const child = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ATRIUM_DATA: dataDir, ATRIUM_PORT: String(port), Static__Apps: JSON.stringify(frontends) },
  })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk))
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk))
  t.after(async () => {
    if (groupAlive(child.pid!)) process.kill(-child.pid!, 'SIGKILL')
    await rm(dataDir, { recursive: true, force: true })
  })
  const deadline = Date.now() + 120_000
  while (!output.includes(`Atrium is running at http://localhost:${port}/`)) {
    assert.ok(Date.now() < deadline && child.exitCode === null, `npm start did not come up:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { child, port, output: () => output }
}
