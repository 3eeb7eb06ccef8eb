import { signedHeaders, timetickAt, timetickTime } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { EventCursors } from '../events/event-cursors.repository.ts'
import type { User, Users } from '../users/users.repository.ts'

export interface ProfileSyncOptions {
  /** Internal base URL of the chat module. */
  chatUrl: string
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
}

/** The cursor's key among the event cursors; module names cannot contain ':'. */
export const PROFILE_SYNC_CURSOR = 'profiles:chat'
/** Users per set_profiles call (the chat module takes up to 500). */
const BATCH = 200
/**
 * A user's timetick_update is drawn before the write commits, so a change can become visible with
 * a tick below one already pushed. Each run reads again from this long before the cursor; the chat
 * module ignores names that did not change, so the overlap costs no events.
 */
const OVERLAP_MS = 10_000
/** Changes made in this process are pushed after this pause, so a burst goes in one call. */
const SOON_MS = 20
const CALL_TIMEOUT_MS = 10_000

/**
 * Pushes the gateway's users to the chat module (POST /private/v1/set_profiles), so every person
 * is known there by id and display name whatever path set it: sign-up, the profile endpoint, the
 * CLI, admin changes (docs/people.md). Runs at start, soon after each change in this process, and
 * every intervalMs; a failure is retried with doubling waits and the cursor moves only after the
 * chat module stored a batch.
 */
export function createProfileSync({
  chatUrl,
  serviceSecret,
  users,
  cursors,
  log,
  intervalMs = 5_000,
  retryMs = 500,
  maxRetryMs = 60_000,
}: ProfileSyncOptions) {
  const url = `${chatUrl.replace(/\/+$/, '')}/private/v1/set_profiles`
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let again = false
  let failures = 0
  let closed = false
  let stopWatching = () => {}
  // Aborts a call in flight when the gateway closes, so closing never waits for the chat module.
  const closing = new AbortController()

  async function push(batch: User[]): Promise<void> {
    const body = JSON.stringify({
      profiles: batch.map((user) => ({ member: String(user.crm_id), name: user.name.trim() })),
    })
    const response = await fetch(url, {
      method: 'POST',
      headers: signedHeaders(serviceSecret, 'POST', url, { 'content-type': 'application/json' }),
      body,
      signal: AbortSignal.any([AbortSignal.timeout(CALL_TIMEOUT_MS), closing.signal]),
    })
    if (!response.ok) throw new Error(`set_profiles answered ${response.status}: ${await response.text()}`)
  }

  /** Pushes every user changed since the stored cursor, batch by batch. */
  async function syncOnce(): Promise<void> {
    const cursor = (await cursors.get(PROFILE_SYNC_CURSOR))?.tick ?? 0
    let from = cursor === 0 ? 0 : timetickAt(Math.max(0, timetickTime(cursor) - OVERLAP_MS))
    let saved = cursor
    for (;;) {
      const batch = await users.changedAfter(from, BATCH)
      if (batch.length === 0) return
      await push(batch)
      from = batch.at(-1)!.timetick_update
      if (from > saved) {
        saved = from
        await cursors.save(PROFILE_SYNC_CURSOR, saved)
      }
      if (batch.length < BATCH) return
    }
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
          if (failures > 0) log.info('profile sync: the chat module took the profiles again')
          failures = 0
        } catch (error) {
          failed = true
          if (closed) break
          if (failures === 0) log.warn(`profile sync: the chat module did not take the profiles (${String(error)})`)
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
