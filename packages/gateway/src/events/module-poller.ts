import { setTimeout as sleep } from 'node:timers/promises'
import { type BroadcastEvent, type EventBatch, timetickAt, timetickTime, toBroadcastEvent } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { GatewayConfig } from '../config.ts'
import type { EventCursors } from './event-cursors.repository.ts'
import type { EventMetrics } from './event-metrics.ts'
import { createModuleCondition } from './module-condition.ts'
import { EventsCallError, type FetchEvents } from './module-events.ts'

/** An event and the one addressee an item of the batch named: `m:<id>` a member (user or guest), `a:<id>` an app. */
export interface AddressedEvent {
  to: string
  event: BroadcastEvent
  /** The addressee muted the event's chat (the item's `Muted`): no notification. */
  muted?: true
}

/** Receives, synchronously and in cursor order, what one chunk of a module's poller fetched. */
export type EventsHandler = (module: string, chunk: number, events: AddressedEvent[]) => void

/** A subscriber's place in a module's poller: its subjects are polled by `chunk` from `cursor` on. */
export interface Membership {
  chunk: number
  /** The chunk's cursor when the subjects joined: every later event for them arrives live. */
  cursor: number
  /** The module's head as probed for this join, or `cursor` when the chunk was already running. */
  head: number
  leave(): void
}

export interface ModulePollerOptions {
  module: string
  fetchEvents: FetchEvents
  cursors: EventCursors
  settings: GatewayConfig['Events']
  onEvents: EventsHandler
  log: FastifyBaseLogger
  now?: () => number
  /** Counts received events, their lag and failed polls; nothing when omitted. */
  metrics?: Pick<EventMetrics, 'received' | 'pollFailed'>
  /** How long new subjects wait for their chunk's restart (RESTART_COALESCE_MS). */
  restartCoalesceMs?: number
}

interface Chunk {
  id: number
  /** Subject to the number of memberships that asked for it. */
  subjects: Map<string, number>
  /** `since` of the next call; advances only when a batch was handed over. */
  cursor: number
  /** Bumped when subjects are added: an answer to an older subject set is thrown away and asked again. */
  version: number
  /** The cursor came from the module (a probe or a batch), not from the clock: it may be saved. */
  confirmed: boolean
  call: AbortController | undefined
  /** The version the pending call asked with. */
  callVersion: number
  /** Set while a restart for new subjects is due (see restartSoon). */
  restart: NodeJS.Timeout | undefined
  stop: AbortController
}

/** The addressee key of a batch item; '' when it names nobody. */
export function addresseeOf(item: { CrmId: number; AppId: number }): string {
  if (item.CrmId > 0) return `m:${item.CrmId}`
  return item.AppId > 0 ? `a:${item.AppId}` : ''
}

/** The addressee key a subject receives items under (`user:` and `code:` ids are both chat members). */
export function addresseeKeyOf(subject: string): string {
  const [kind, id] = subject.split(':')
  return kind === 'app' ? `a:${id}` : `m:${id}`
}

/** Back-off before the next call after `failures` failed ones: doubling from RetryMinMs, capped, with jitter. */
export function backoffMs(failures: number, { RetryMinMs, RetryMaxMs }: GatewayConfig['Events']): number {
  const ceiling = Math.min(RetryMaxMs, RetryMinMs * 2 ** Math.min(failures - 1, 30))
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2)
}

/** Turns a batch into addressed events; items of one event (one TickUpdate) share one BroadcastEvent. */
export function normalizeBatch(module: string, batch: EventBatch): AddressedEvent[] {
  const events: AddressedEvent[] = []
  let last: BroadcastEvent | undefined
  for (const item of batch.Events) {
    const to = addresseeOf(item)
    if (to === '') continue
    if (last?.tick !== item.TickUpdate) last = toBroadcastEvent(module, item)
    events.push(item.Muted === true ? { to, event: last, muted: true } : { to, event: last })
  }
  return events
}

/** The ticks of a batch's events, once each: the items of one event share its TickUpdate. */
function eventTicks(batch: EventBatch): number[] {
  const ticks: number[] = []
  for (const item of batch.Events) if (ticks.at(-1) !== item.TickUpdate) ticks.push(item.TickUpdate)
  return ticks
}

const CURSOR_SAVE_MS = 1000
/**
 * New subjects restart their chunk's pending call within this long, so the subscribers that open
 * in a burst (they fill one chunk after another) share one restart instead of one module call
 * each. Their events are not lost meanwhile: the cursor stays where it was until a call that
 * asked for them answers.
 */
const RESTART_COALESCE_MS = 20
/** An empty answer faster than this came from a module that does not long-poll: pause before asking again. */
const NO_WAIT_MS = 50

/**
 * The events poller of one module on this gateway (ARCHITECTURE.md, "Events"). It polls only for
 * the subjects of this instance's SSE subscribers, in chunks of at most `ChunkSubjects` subjects,
 * each a long-poll loop with its own cursor; nothing is polled while nobody is subscribed. A
 * subscriber's subjects always share one chunk, so its events of this module arrive in cursor
 * order. A cursor advances only after a batch was handed over, so a module that is down (refused,
 * 5xx, timeout) is retried with back-off and resumed without loss. The lowest cursor of the
 * running chunks is saved, so a restarted gateway resumes from it.
 */
export function createModulePoller({
  module,
  fetchEvents,
  cursors,
  settings,
  onEvents,
  log,
  now = Date.now,
  metrics,
  restartCoalesceMs = RESTART_COALESCE_MS,
}: ModulePollerOptions) {
  const chunks = new Set<Chunk>()
  let nextChunkId = 1
  let closed = false
  let saveTimer: NodeJS.Timeout | undefined
  let saving: Promise<void> = Promise.resolve()
  let lastSaved = -1
  const condition = createModuleCondition(module, log)

  /** The head of the module's feed: with no subjects a module answers no events and LastTick = its head. */
  async function probeHead(): Promise<number | undefined> {
    try {
      const batch = await fetchEvents({ since: 0, subjects: [], limit: 1, wait: 0 }, AbortSignal.timeout(60_000))
      condition.answered()
      return batch.LastTick
    } catch (error) {
      condition.failed(error)
      return undefined
    }
  }

  /** Where a chunk starts when none is running: the saved cursor if recent and not past the head, else the head. */
  async function startPosition(): Promise<{ start: number; head: number; confirmed: boolean }> {
    const [saved, probed] = await Promise.all([cursors.get(module), probeHead()])
    // A module that cannot be asked has no head to give; events it commits later carry later timeticks.
    const head = probed ?? timetickAt(now()) - 1
    const recent = saved !== undefined && timetickTime(saved.tick) >= now() - settings.ReplayMaxAgeSeconds * 1000
    if (recent && saved.tick <= head) return { start: saved.tick, head, confirmed: true }
    return { start: head, head, confirmed: probed !== undefined }
  }

  function pick(subjects: readonly string[]): Chunk | undefined {
    let roomy: Chunk | undefined
    for (const chunk of chunks) {
      const missing = subjects.filter((subject) => !chunk.subjects.has(subject)).length
      if (missing === 0) return chunk
      if (!roomy && chunk.subjects.size + missing <= settings.ChunkSubjects) roomy = chunk
    }
    return roomy
  }

  function runningCursor(): number | undefined {
    let highest: number | undefined
    for (const chunk of chunks) highest = Math.max(highest ?? 0, chunk.cursor)
    return highest
  }

  function enter(chunk: Chunk, subjects: readonly string[], head: number | undefined): Membership {
    let added = false
    for (const subject of subjects) {
      const count = chunk.subjects.get(subject) ?? 0
      chunk.subjects.set(subject, count + 1)
      if (count === 0) added = true
    }
    if (added) {
      chunk.version++
      restartSoon(chunk)
    }
    let left = false
    return {
      chunk: chunk.id,
      cursor: chunk.cursor,
      head: Math.max(head ?? chunk.cursor, chunk.cursor),
      leave() {
        if (left) return
        left = true
        for (const subject of subjects) {
          const count = chunk.subjects.get(subject) ?? 0
          if (count <= 1) chunk.subjects.delete(subject)
          else chunk.subjects.set(subject, count - 1)
        }
        if (chunk.subjects.size === 0) stopChunk(chunk)
      },
    }
  }

  /** Restarts the chunk's pending call, once for the subjects added within restartCoalesceMs. */
  function restartSoon(chunk: Chunk) {
    if (chunk.restart) return
    chunk.restart = setTimeout(() => {
      chunk.restart = undefined
      if (chunk.callVersion !== chunk.version) chunk.call?.abort()
    }, restartCoalesceMs)
  }

  function stopChunk(chunk: Chunk) {
    clearTimeout(chunk.restart)
    chunk.stop.abort()
    chunk.call?.abort()
    chunks.delete(chunk)
    if (chunks.size > 0) return scheduleSave()
    clearTimeout(saveTimer)
    saveTimer = undefined
    if (chunk.confirmed) save(chunk.cursor)
  }

  async function run(chunk: Chunk) {
    let failures = 0
    while (!chunk.stop.signal.aborted) {
      const version = chunk.version
      const call = new AbortController()
      chunk.call = call
      chunk.callVersion = version
      const started = Date.now()
      let batch: EventBatch
      try {
        batch = await fetchEvents(
          {
            since: chunk.cursor,
            subjects: [...chunk.subjects.keys()],
            limit: settings.PageLimit,
            wait: settings.PollWaitMs,
          },
          call.signal,
        )
      } catch (error) {
        if (chunk.stop.signal.aborted) return
        if (chunk.version !== version) continue
        failures++
        condition.failed(error)
        metrics?.pollFailed(module)
        const delay = error instanceof EventsCallError && error.failure === 'missing' ? settings.RetryMaxMs : 0
        await pause(Math.max(delay, backoffMs(failures, settings)), chunk)
        continue
      }
      if (chunk.stop.signal.aborted) return
      // Asked before new subjects joined: their events might be missing from it, so ask again from the same cursor.
      if (chunk.version !== version) continue
      condition.answered()
      failures = 0
      if (metrics && batch.Events.length > 0) metrics.received(module, eventTicks(batch), now())
      onEvents(module, chunk.id, normalizeBatch(module, batch))
      chunk.cursor = Math.max(chunk.cursor, batch.LastTick)
      chunk.confirmed = true
      scheduleSave()
      if (batch.Events.length === 0 && Date.now() - started < NO_WAIT_MS) await pause(settings.RetryMinMs, chunk)
    }
  }

  async function pause(ms: number, chunk: Chunk) {
    try {
      await sleep(ms, undefined, { signal: chunk.stop.signal })
    } catch {
      // stopped
    }
  }

  /** The lowest cursor of the running chunks, when every one of them was confirmed by the module. */
  function lowestCursor(): number | undefined {
    const all = [...chunks]
    if (all.length === 0 || !all.every((chunk) => chunk.confirmed)) return undefined
    return Math.min(...all.map((chunk) => chunk.cursor))
  }

  function save(tick: number) {
    if (tick === lastSaved) return
    lastSaved = tick
    saving = saving
      .then(() => cursors.save(module, tick))
      .catch((error) => log.error({ module, err: error }, 'events: could not save the cursor'))
  }

  /** Saves the lowest cursor of the running chunks, at most once a second. */
  function scheduleSave() {
    saveTimer ??= setTimeout(() => {
      saveTimer = undefined
      const tick = lowestCursor()
      if (tick !== undefined) save(tick)
    }, CURSOR_SAVE_MS).unref()
  }

  return {
    module,

    /**
     * Adds subjects to a chunk (one with them all or with room, else a new one) and returns the
     * membership. New subjects restart the chunk's pending call (within RESTART_COALESCE_MS), so
     * every event after `cursor` that is addressed to them is handed over live. Subjects past `ChunkSubjects` are not polled.
     */
    async join(requested: readonly string[]): Promise<Membership> {
      if (closed) throw new Error('the events poller is closed')
      const subjects = [...new Set(requested)].slice(0, settings.ChunkSubjects)
      const found = pick(subjects)
      if (found) return enter(found, subjects, undefined)
      const running = runningCursor()
      const position =
        running === undefined ? await startPosition() : { start: running, head: undefined, confirmed: true }
      // Another join may have made a chunk with room while the head was read.
      const chunk: Chunk = pick(subjects) ?? {
        id: nextChunkId++,
        subjects: new Map(),
        cursor: position.start,
        version: 0,
        confirmed: position.confirmed,
        call: undefined,
        callVersion: 0,
        restart: undefined,
        stop: new AbortController(),
      }
      if (!chunks.has(chunk)) {
        chunks.add(chunk)
        run(chunk).catch((error) => log.error({ module, err: error }, 'events: a poll loop failed'))
      }
      return enter(chunk, subjects, position.head)
    },

    /** Subjects polled now, per chunk (for diagnostics and tests). */
    chunks(): { id: number; cursor: number; subjects: string[] }[] {
      return [...chunks].map((chunk) => ({ id: chunk.id, cursor: chunk.cursor, subjects: [...chunk.subjects.keys()] }))
    },

    /** Stops every loop and saves the cursor. */
    async close(): Promise<void> {
      closed = true
      const final = lowestCursor()
      for (const chunk of chunks) {
        clearTimeout(chunk.restart)
        chunk.stop.abort()
        chunk.call?.abort()
      }
      chunks.clear()
      clearTimeout(saveTimer)
      if (final !== undefined) save(final)
      await saving
    },
  }
}

export type ModulePoller = ReturnType<typeof createModulePoller>
