/**
 * Runs one Atrium process as a child and restarts it gracefully on request, or when the release
 * pointer it was started from (`dist/<process>/current`) names another build: the running process
 * drains and exits, then the new build starts (docs/operations.md, "Releases and rollback").
 * Used by `npm start` (scripts/start.ts) and the release test.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { realpath } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { currentEntry } from '@atrium/platform/releases'

export interface SuperviseOptions {
  name: string
  /** The script to run, asked again at every (re)start. */
  entry: () => string
  /** The child's whole environment. */
  env: Record<string, string | undefined>
  /** A URL that answers 2xx once the process serves. */
  health: string
  /** Receives every line the child writes, prefixed with `[name] `. */
  log: (line: string) => void
}

export interface Supervised {
  readonly name: string
  /** The script the running child was started from. */
  readonly script: string
  readonly child: ChildProcess
  /** Stops the child gracefully (SIGTERM: it drains), starts it again from `entry()`, and resolves once healthy. */
  restart(): Promise<void>
  /** Stops for good: signals the child, and `exited` resolves once it is gone. */
  stop(signal: NodeJS.Signals): void
  /** The child's exit code once it stopped outside a restart: stopped, or died on its own. */
  readonly exited: Promise<number>
}

/** Polls `url` until it answers 2xx; throws once `deadline` (epoch ms) passes. */
export async function waitHealthy(url: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url)
      await response.body?.cancel()
      if (response.ok) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${url} did not become healthy`)
}

/** Starts a process and keeps it as described in SuperviseOptions. */
export function supervise({ name, entry, env, health, log }: SuperviseOptions): Supervised {
  let stopping = false
  let restarting = false
  let queue = Promise.resolve()
  let finish: (code: number) => void = () => {}
  const exited = new Promise<number>((resolve) => {
    finish = resolve
  })

  function start(): { child: ChildProcess; script: string } {
    const script = entry()
    const child = spawn(process.execPath, ['--enable-source-maps', script], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream! }).on('line', (line) => log(`[${name}] ${line}`))
    }
    child.on('exit', (code) => {
      if (!restarting) finish(code ?? 1)
    })
    return { child, script }
  }

  let running = start()

  async function restartNow(): Promise<void> {
    if (stopping) return
    restarting = true
    const { child } = running
    if (child.exitCode === null && child.signalCode === null) {
      const gone = once(child, 'exit')
      child.kill('SIGTERM')
      await gone
    }
    restarting = false
    if (stopping) return finish(child.exitCode ?? 0)
    running = start()
    await waitHealthy(health, Date.now() + 90_000)
  }

  return {
    name,
    get script() {
      return running.script
    },
    get child() {
      return running.child
    },
    restart() {
      queue = queue.then(restartNow)
      return queue
    },
    stop(signal) {
      stopping = true
      const { child } = running
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    },
    exited,
  }
}

/**
 * Restarts `supervised` whenever `dist/<name>/current` resolves to another script than the one it
 * runs (checked every `intervalMs`); returns a function that stops watching.
 */
export function restartOnActivation(
  supervised: Supervised,
  dist: string,
  log: (line: string) => void,
  intervalMs = 500,
): () => void {
  let busy = false
  async function check() {
    let active: string
    try {
      active = await realpath(currentEntry(dist, supervised.name))
    } catch {
      return // no build is active (or the pointer is being replaced): keep what runs
    }
    if (active === supervised.script) return
    log(`[release] ${supervised.name}: ${supervised.script} -> ${active}; restarting ${supervised.name}`)
    await supervised.restart()
    log(`[release] ${supervised.name} runs ${supervised.script}`)
  }
  const timer = setInterval(() => {
    if (busy) return
    busy = true
    check()
      .catch((error: Error) => log(`[release] ${supervised.name}: restart failed: ${error.message}`))
      .finally(() => {
        busy = false
      })
  }, intervalMs)
  return () => clearInterval(timer)
}
