/**
 * What every server process a benchmark starts does alike: stop when the benchmark is gone, stop
 * cleanly on SIGTERM, and record a CPU profile on demand.
 */
import { renameSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'

/** Replaces a file in one step, so the benchmark never reads half of it. */
export function writeFileAtomically(path: string, content: string) {
  writeFileSync(`${path}.partial`, content)
  renameSync(`${path}.partial`, path)
}

/**
 * Ends the process with the benchmark, even when the benchmark could not stop its children, and
 * on SIGTERM after `close` (or after 5 s, whichever is first).
 */
export function stopWithParent(close: () => Promise<unknown>) {
  const parent = process.ppid
  setInterval(() => process.ppid !== parent && process.exit(0), 1000).unref()
  process.once('SIGTERM', () => {
    setTimeout(() => process.exit(0), 5000).unref()
    close().then(() => process.exit(0))
  })
}

/** Toggles the CPU profiler on SIGUSR2: the first starts it, the second writes the profile to `path`. */
export function profileOnSignal(path: string) {
  let session: Session | undefined
  process.on('SIGUSR2', async () => {
    if (!session) {
      session = new Session()
      session.connect()
      await session.post('Profiler.enable')
      await session.post('Profiler.start')
      return
    }
    const { profile } = await session.post('Profiler.stop')
    session.disconnect()
    session = undefined
    writeFileAtomically(path, JSON.stringify(profile))
  })
}
