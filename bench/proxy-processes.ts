/**
 * Processes of the gateway proxy benchmark (bench/proxy.ts): servers started pinned to a CPU with
 * taskset, their first JSON line read as their address, and their CPU time read from /proc.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'

/** Clock ticks per second of /proc/<pid>/stat times. */
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100

export interface Pinned {
  child: ChildProcess
  /** The server's pid: taskset execs the command, so it is the child's pid. */
  pid: number
  /** Everything the process wrote to stderr so far, for error messages. */
  stderr(): string
  stop(): Promise<void>
}

/** Starts `command` pinned to `cpu` (a taskset CPU list; empty: unpinned), stdin from `input` when given. */
export function spawnPinned(cpu: string, command: string, args: string[], input?: string): Pinned {
  const [file, argv] = cpu ? ['taskset', ['-c', cpu, command, ...args]] : [command, args]
  const child = spawn(file, argv, { stdio: ['pipe', 'pipe', 'pipe'] })
  let errors = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString('utf8')).slice(-4000)
  })
  child.stdin?.end(input)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return {
    child,
    pid: child.pid ?? 0,
    stderr: () => errors,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    },
  }
}

/** The first line the process prints on stdout, parsed as JSON; rejects when it exits first or after `ms`. */
export function firstJsonLine<T>(server: Pinned, ms = 30_000): Promise<T> {
  const { child } = server
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! })
    const fail = (why: string) => {
      clearTimeout(timer)
      lines.close()
      reject(new Error(`${why}\n${server.stderr()}`))
    }
    const timer = setTimeout(() => fail(`pid ${server.pid} printed no address within ${ms} ms`), ms)
    child.once('exit', (code, signal) => fail(`pid ${server.pid} exited (${code ?? signal})`))
    lines.once('line', (line) => {
      clearTimeout(timer)
      lines.close()
      try {
        resolve(JSON.parse(line) as T)
      } catch {
        reject(new Error(`pid ${server.pid} printed ${line}`))
      }
    })
  })
}

/** Pids whose parent is `pid` (nginx workers under their master). */
export function childrenOf(pid: number): number[] {
  const children: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (parseStat(readFileSync(`/proc/${name}/stat`, 'utf8')).ppid === pid) children.push(Number(name))
    } catch {
      // The process ended while the list was read.
    }
  }
  return children
}

function parseStat(stat: string) {
  // The command name may hold spaces and parentheses; the fields after the last ')' are fixed.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return {
    ppid: Number(fields[1]),
    utime: Number(fields[11]),
    stime: Number(fields[12]),
    children: Number(fields[13]) + Number(fields[14]),
  }
}

/** User plus system CPU time of the processes (all threads), in microseconds. */
export function cpuMicros(pids: number[]): number {
  let ticks = 0
  for (const pid of pids) {
    const { utime, stime } = parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))
    ticks += utime + stime
  }
  return (ticks * 1e6) / CLOCK_TICKS
}

/** CPU time of this process's children that have exited and been waited for (wrk after its run), in microseconds. */
export function exitedChildrenCpuMicros(): number {
  return (parseStat(readFileSync('/proc/self/stat', 'utf8')).children * 1e6) / CLOCK_TICKS
}

/** Whether a program is on the PATH. */
export function hasProgram(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Busy and total jiffies of one CPU from /proc/stat; undefined when `cpu` is not a single CPU. */
export function cpuJiffies(cpu: string): { busy: number; total: number } | undefined {
  if (!/^\d+$/.test(cpu)) return undefined
  const line = readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .find((row) => row.startsWith(`cpu${cpu} `))
  if (!line) return undefined
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, ...rest] = line.split(/\s+/).slice(1).map(Number)
  const busy = user + nice + system + rest.reduce((sum, value) => sum + value, 0)
  return { busy, total: busy + idle + iowait }
}

/** The share of the time between two readings of cpuJiffies that the CPU was busy; NaN when unknown. */
export function busyShare(before: ReturnType<typeof cpuJiffies>, after: ReturnType<typeof cpuJiffies>): number {
  if (!before || !after || after.total === before.total) return Number.NaN
  return (after.busy - before.busy) / (after.total - before.total)
}

/**
 * Waits (up to `seconds`) until each of the CPUs is busy less than `maxShare` of a second: the
 * benchmark's servers are idle between runs, so whatever is busy then is another process.
 */
export async function waitForQuiet(cpus: string[], maxShare: number, seconds: number) {
  const deadline = Date.now() + seconds * 1000
  for (let said = false; ; said = true) {
    const before = cpus.map(cpuJiffies)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const busy = cpus.map((cpu, index) => busyShare(before[index], cpuJiffies(cpu)))
    if (!busy.some((share) => share > maxShare) || Date.now() > deadline) return
    if (!said) {
      const shown = busy.map((share) => `${(share * 100).toFixed(0)}%`).join(' and ')
      console.log(`waiting for other processes to leave the CPUs (${shown} busy)`)
    }
  }
}
