/**
 * A gateway node started as `npm start` starts it, with `Workers=2` (server/workers.ts): the
 * primary and its two workers on one port, and requests each on a connection of its own so that
 * the kernel may hand them to either worker (`X-Atrium-Worker` says which answered).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { type IncomingHttpHeaders, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { TestContext } from 'node:test'
import { until } from '@atrium/platform/testing'

const ENTRY = new URL('../src/main.ts', import.meta.url).pathname
/** The inter-service secret the gateways started here run with. */
export const SECRET = 'workers-test-secret-'.padEnd(40, 'x')

export interface Answer {
  status: number
  /** The index of the worker that answered. */
  worker: string
  headers: IncomingHttpHeaders
  body: string
}

/** One request on a connection of its own, so that the kernel may hand it to either worker. */
export function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method,
      path,
      agent: false,
      headers: { host: 'localhost', ...headers },
    })
    req.on('response', (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk
      })
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          worker: String(res.headers['x-atrium-worker']),
          headers: res.headers,
          body,
        }),
      )
    })
    req.on('error', reject)
    req.end()
  })
}

/** Sends the same request until both workers have answered it; returns every answer. */
export async function fromBothWorkers(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
) {
  const answers: Answer[] = []
  await until(
    async () => {
      answers.push(await send(port, method, path, headers))
      return new Set(answers.map((answer) => answer.worker)).size === 2
      // Generous: on a loaded machine a worker may take a while to start or to get a connection.
    },
    `${method} ${path} answered by both workers`,
    30_000,
  )
  return answers
}

export interface Primary {
  child: ChildProcess
  port: Promise<number>
  /** Pid of each worker as the primary last reported it listening. */
  pids: Map<number, number>
  exited: Promise<[number | null, NodeJS.Signals | null]>
}

/** Runs the gateway entry with Workers=2 and follows the primary's reports of its workers. */
function startPrimary(t: TestContext, env: Record<string, string>, cwd: string): Primary {
  const child = spawn(process.execPath, [ENTRY], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ServiceSecret: SECRET, Workers: '2', Port: '0', Host: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const pids = new Map<number, number>()
  const port = new Promise<number>((resolve, reject) => {
    exited.then(([code]) => reject(new Error(`the gateway exited with ${code} before listening\n${stderr}`)))
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.includes('"gateway worker listening"')) return
      const entry = JSON.parse(line) as { worker: number; workerPid: number; port: number }
      pids.set(entry.worker, entry.workerPid)
      if (pids.size === 2) resolve(entry.port)
    })
  })
  return { child, port, pids, exited }
}

/**
 * A directory for one node's files, removed after the test, and the start of its primary there,
 * stopped after the test (registered before the database's removal, so the processes stop first).
 */
export async function nodeDirectory(t: TestContext) {
  const dir = await mkdtemp(join(tmpdir(), 'atrium-workers-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  let primary: Primary | undefined
  t.after(async () => {
    if (!primary || primary.child.exitCode !== null || primary.child.signalCode !== null) return
    primary.child.kill('SIGTERM')
    await primary.exited
  })
  return {
    dir,
    start(env: Record<string, string>): Primary {
      primary = startPrimary(t, env, dir)
      return primary
    },
  }
}
