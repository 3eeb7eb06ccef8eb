import { signedHeaders, timetickAt, timetickTime } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { EventCursors } from '../events/event-cursors.repository.ts'
import type { ModuleInstances } from '../proxy/module-instances.ts'
import type { User, Users } from '../users/users.repository.ts'

/** A module the gateway pushes its users to with POST /private/v1/set_profiles (profile-targets.ts). */
export interface ProfileTarget {
  /** The module's name in `Modules`; the sync's cursor is `profiles:<module>`. */
  module: string
  /** The module's instances (Modules). */
  instances: ModuleInstances
  /** Users per set_profiles call. */
  batchSize: number
  /** The set_profiles entries of a batch of users, in the module's own shape. */
  describe(users: User[]): Promise<unknown[]>
}

export interface ProfileSyncOptions {
  target: ProfileTarget
  serviceSecret: string
  users: Users
  /** Where the sync keeps its cursor (users' timetick_update), so nothing is lost across restarts. */
  cursors: EventCursors
  log: FastifyBaseLogger
  /** How often to look for changes made by other processes (the CLI, another gateway). */
  intervalMs?: number
  /** First wait after a failure; it doubles up to maxRetryMs. */
  retryMs?: number
  maxRetryMs?: number
  /** The clock that dates each run (tests move it). */
  now?: () => number
}

/** The cursor's key among the event cursors of a target module; module names cannot contain ':'. */
function profileSyncCursor(module: string): string {
  return `profiles:${module}`
}

/**
 * A user's timetick_update is drawn before the write commits, so a change can become visible with
 * a tick below one already pushed, but (we assume) never this long after its tick was drawn. A run
 * reads again from this long before the cursor, or before the start of the last complete run when
 * that is later: what commits after a run began has a tick drawn at most this long before. The
 * modules ignore profiles that did not change, so the overlap costs no events.
 */
const OVERLAP_MS = 10_000
/** Changes made in this process are pushed after this pause, so a burst goes in one call. */
const SOON_MS = 20
const CALL_TIMEOUT_MS = 10_000

/**
 * Pushes the gateway's users to one module (POST /private/v1/set_profiles), so every person is
 * known there whatever path changed them: sign-up, the profile endpoint, the CLI, admin changes
 * (docs/people.md). One sync runs per target module, each with its own cursor. Runs at start, soon
 * after each change in this process, and every intervalMs; a failure is retried with doubling
 * waits and the cursor moves only after the module stored a batch.
 */
export function createProfileSync({
  target,
  serviceSecret,
  users,
  cursors,
  log,
  intervalMs = 5_000,
  retryMs = 500,
  maxRetryMs = 60_000,
  now = Date.now,
}: ProfileSyncOptions) {
  const url = `${target.instances.url.replace(/\/+$/, '')}/private/v1/set_profiles`
  const cursorKey = profileSyncCursor(target.module)
  const module = `the ${target.module} module`
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let again = false
  let failures = 0
  let closed = false
  let stopWatching = () => {}
  /** When the last run that read every change began; none yet in this process. */
  let lastCompleteStart: number | undefined
  // Aborts a call in flight when the gateway closes, so closing never waits for the module.
  const closing = new AbortController()

  async function push(batch: User[]): Promise<void> {
    const body = JSON.stringify({ profiles: await target.describe(batch) })
    const response = await target.instances.fetch(url, {
      method: 'POST',
      headers: signedHeaders(serviceSecret, 'POST', url, { 'content-type': 'application/json' }),
      body,
      signal: AbortSignal.any([AbortSignal.timeout(CALL_TIMEOUT_MS), closing.signal]),
    })
    if (!response.ok) throw new Error(`set_profiles answered ${response.status}: ${await response.text()}`)
  }

  /**
   * Where a run starts reading. Both bounds are safe: everything not yet pushed has a later tick.
   * The second keeps a large import from being pushed again every interval while it is the newest
   * change (the cursor's overlap alone would re-read its last ten seconds of users each time).
   */
  function readFrom(cursor: number): number {
    if (cursor === 0) return 0
    const overlap = timetickAt(Math.max(0, timetickTime(cursor) - OVERLAP_MS))
    if (lastCompleteStart === undefined) return overlap
    return Math.max(overlap, Math.min(cursor, timetickAt(lastCompleteStart - OVERLAP_MS)))
  }

  /** Pushes every user changed since the stored cursor, batch by batch. */
  async function syncOnce(): Promise<void> {
    const started = now()
    const cursor = (await cursors.get(cursorKey))?.tick ?? 0
    let from = readFrom(cursor)
    let saved = cursor
    for (;;) {
      const batch = await users.changedAfter(from, target.batchSize)
      if (batch.length === 0) break
      await push(batch)
      from = batch.at(-1)!.timetick_update
      if (from > saved) {
        saved = from
        await cursors.save(cursorKey, saved)
      }
      if (batch.length < target.batchSize) break
    }
    lastCompleteStart = started
  }

  function schedule(delayMs: number): void {
    if (closed) return
    clearTimeout(timer)
    timer = setTimeout(() => void run(), delayMs)
    timer.unref()
  }

  /** One sync; concurrent calls share it and a call during a run causes one more. */
  function run(): Promise<void> {
    if (running) {
      again = true
      return running
    }
    running = (async () => {
      let failed = false
      do {
        again = false
        try {
          await syncOnce()
          if (failures > 0) log.info(`profile sync: ${module} took the profiles again`)
          failures = 0
        } catch (error) {
          failed = true
          if (closed) break
          if (failures === 0) log.warn(`profile sync: ${module} did not take the profiles (${String(error)})`)
          failures++
        }
      } while (again && !failed)
      running = undefined
      schedule(failed ? Math.min(maxRetryMs, retryMs * 2 ** (failures - 1)) : intervalMs)
    })()
    return running
  }

  return {
    /** Starts syncing: now, after each change in this process, and periodically. */
    start(): void {
      stopWatching = users.watch(() => {
        // During a run, one more pass picks the change up; while failing, the retry will.
        if (running) again = true
        else if (failures === 0) schedule(SOON_MS)
      })
      void run()
    },

    /** Syncs now and resolves when done (tests, and a CLI change someone waits for). */
    async flush(): Promise<void> {
      await run()
      if (running) await running
    },

    async close(): Promise<void> {
      closed = true
      stopWatching()
      clearTimeout(timer)
      closing.abort()
      await running
    },
  }
}

export type ProfileSync = ReturnType<typeof createProfileSync>
