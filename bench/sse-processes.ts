/**
 * Processes of the SSE benchmark (bench/sse.ts): Node servers started as children whose first JSON
 * line is their address, and the CPU time and resident memory of a process read from /proc.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { createInterface } from 'node:readline'
import { childrenOf } from './proxy-processes.ts'

/** Clock ticks per second of /proc/<pid>/stat times. */
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100

export interface NodeServer<T> {
  pid: number
  ready: T
  stop(): Promise<void>
}

/** Runs `node <script> ...args` with `input` on stdin and waits (up to `ms`) for its first stdout line, as JSON. */
export async function startNodeServer<T>(
  script: string,
  args: string[],
  input: string,
  ms: number,
  nodeOptions: string[] = [],
): Promise<NodeServer<T>> {
  const child: ChildProcess = spawn(process.execPath, [...nodeOptions, script, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let errors = ''
  child.stderr!.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString('utf8')).slice(-4000)
  })
  child.stdin!.end(input)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const ready = await new Promise<T>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! })
    const fail = (why: string) => {
      clearTimeout(timer)
      lines.close()
      reject(new Error(`${script}: ${why}\n${errors}`))
    }
    const timer = setTimeout(() => fail(`no first line within ${ms} ms`), ms)
    child.once('exit', (code, signal) => fail(`exited (${code ?? signal})`))
    lines.once('line', (line) => {
      clearTimeout(timer)
      lines.close()
      resolve(JSON.parse(line) as T)
    })
  })
  return {
    pid: child.pid!,
    ready,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    },
  }
}

function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // The command name may hold spaces and parentheses; the fields after the last ')' are fixed.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/** User plus system CPU time of a process (all its threads), in microseconds. */
export function cpuMicros(pid: number): number {
  const fields = statFields(pid)
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS
}

/** Resident memory of a process in bytes (VmRSS). */
export function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((row) => row.startsWith('VmRSS:'))
  return Number(line?.match(/(\d+)/)?.[1] ?? 0) * 1024
}

/** `pid` and every process under it (the gateway's primary and workers under the benchmark's gateway process). */
export function treeOf(pid: number): number[] {
  return [pid, ...childrenOf(pid).flatMap(treeOf)]
}

/** A free loopback port (bound and released; nginx takes it a moment later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        address && typeof address !== 'string' ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })
}
