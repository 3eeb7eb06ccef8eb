import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { createTimetickGenerator, timetickNode } from '@atrium/platform'
import { createTestDatabaseUrl } from '@atrium/platform/testing'
import { SERVICE_SECRET } from '../../test/support.ts'
import { CLI_NODE_NUMBER } from '../config.ts'
import { cliTimetickLane } from './cli.ts'

const LAUNCHER = fileURLToPath(new URL('./atrium.mjs', import.meta.url))
const NODE = join(fileURLToPath(new URL('../../../../', import.meta.url)), 'node_modules', '.bin', 'node')

/** Starts `atrium user create` as its own process; resolves its pid and the user's id. */
function createUser(env: Record<string, string>, email: string): Promise<{ pid: number; crmId: number }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      NODE,
      [LAUNCHER, 'user', 'create', '--email', email, '--json'],
      { env: { PATH: process.env.PATH ?? '', ...env } },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`atrium user create: ${stderr}`))
        resolve({ pid: child.pid!, crmId: Number(JSON.parse(stdout).crmId) })
      },
    )
  })
}

test('CLI runs started together write ids on different lanes of the CLI node number', async (t) => {
  const env = {
    GatewayDB: await createTestDatabaseUrl(t, 'sqlite'),
    ServiceSecret: SERVICE_SECRET,
    Modules: JSON.stringify({ chat: 'http://127.0.0.1:9' }),
  }
  // The first run migrates the database, so the parallel ones only write.
  await createUser(env, 'first@example.com')
  const runs = await Promise.all(Array.from({ length: 6 }, (_, i) => createUser(env, `user${i}@example.com`)))
  for (const { pid, crmId } of runs) {
    assert.equal(timetickNode(crmId), CLI_NODE_NUMBER, 'never a gateway node number')
    // 4 ids a millisecond per lane: the id's sequence lies in this run's lane.
    assert.equal(Math.floor((crmId % 128) / 4), pid % 32, `pid ${pid}`)
  }
  assert.equal(new Set(runs.map((run) => run.crmId)).size, runs.length)
})

test('two CLI runs in the same millisecond with nearby process ids make different ids', () => {
  const clock = () => Date.UTC(2026, 10, 25, 12)
  for (let pid = 1000; pid < 1040; pid++) {
    const runs = [pid, pid + 1, pid + 7, pid + 31].map((runPid) =>
      createTimetickGenerator({ node: CLI_NODE_NUMBER, now: clock, lane: cliTimetickLane(runPid) }),
    )
    // Each run makes a handful of ids, more than a lane's 4 a millisecond.
    const ids = runs.flatMap((next) => Array.from({ length: 6 }, next))
    assert.equal(new Set(ids).size, ids.length, `pids from ${pid}`)
  }
})
