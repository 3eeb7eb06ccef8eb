import { EventEmitter, once } from 'node:events'
import type { Database, EventBatch, EventBatchItem, TimetickGenerator } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { WalletDatabase } from '../db/schema.ts'

/** Event types of the wallet module (spec: "Event types"; docs/wallet.md, "Events"). */
export type WalletEventType = 'TxInWallet' | 'TxStateChanged' | 'BalanceChanged'

/** An event a wallet operation records in its own transaction. */
export interface WalletEventInput {
  type: WalletEventType
  /** The user the event is for. */
  addressee: number
  /** The app the event is also for; 0 or omitted for none. */
  app_id?: number
  data: Record<string, unknown>
}

/** Capability subjects of an events request, split by kind; `code:` subjects (guests) have no wallet. */
export interface Subjects {
  users: number[]
  apps: number[]
}

export interface ListOptions {
  since: number
  /** Omitted: every addressee. */
  subjects?: Subjects
  limit: number
}

/**
 * The wallet's event feed. A reader must never skip an event, so cursor ticks must become visible
 * in increasing order. Every wallet write transaction holds the one wallet write lock (SQLite's
 * database lock from BEGIN IMMEDIATE; on PostgreSQL a transaction advisory lock, taken by the
 * store) from before it reads the head until it commits: a row's tick is above the head it saw,
 * and no other writer can commit in between, so rows commit in tick order.
 */
export function createEventFeed(database: Database<WalletDatabase>, nextTick: TimetickGenerator) {
  const { db } = database
  const committedEvents = new EventEmitter()
  committedEvents.setMaxListeners(0)

  async function headTick(from: Kysely<WalletDatabase> = db): Promise<number> {
    const row = await from
      .selectFrom('wallet_events')
      .select((eb) => eb.fn.max('tick_update').as('max'))
      .executeTakeFirst()
    return Number(row?.max ?? 0)
  }

  /** Records an event inside a write transaction that holds the wallet write lock. */
  async function append(trx: Kysely<WalletDatabase>, event: WalletEventInput): Promise<number> {
    if ('tick' in event.data) throw new Error('event data must not have a tick of its own: the feed adds it')
    const timetick = nextTick()
    const tickUpdate = Math.max(timetick, (await headTick(trx)) + 1)
    await trx
      .insertInto('wallet_events')
      .values({
        timetick,
        tick_update: tickUpdate,
        addressee: event.addressee,
        app_id: event.app_id ?? 0,
        event_type: event.type,
        data: JSON.stringify(event.data),
      })
      .execute()
    return tickUpdate
  }

  /** Wakes long-polls; call after every commit that appended. */
  function committed(): void {
    committedEvents.emit('committed')
  }

  async function list({ since, subjects, limit }: ListOptions): Promise<EventBatch> {
    // The head is read first: rows committed while this runs are left for the next call, never skipped.
    const head = await headTick()
    if (head <= since) return { Events: [], LastTick: since }
    const users = subjects?.users ?? []
    const apps = subjects?.apps ?? []
    if (subjects && users.length === 0 && apps.length === 0) return { Events: [], LastTick: head }
    let query = db
      .selectFrom('wallet_events')
      .selectAll()
      .where('tick_update', '>', since)
      .where('tick_update', '<=', head)
      .orderBy('tick_update')
      .limit(limit)
    if (subjects) {
      query = query.where((eb) =>
        eb.or([
          ...(users.length > 0 ? [eb('addressee', 'in', users)] : []),
          ...(apps.length > 0 ? [eb('app_id', 'in', apps)] : []),
        ]),
      )
    }
    const rows = await query.execute()
    const wantedUsers = subjects && new Set(users)
    const wantedApps = subjects && new Set(apps)
    const items: EventBatchItem[] = []
    for (const row of rows) {
      const data = { ...(JSON.parse(row.data) as Record<string, unknown>), tick: String(row.tick_update) }
      const item = (crmId: number, appId: number): EventBatchItem => ({
        CrmId: crmId,
        AppId: appId,
        Timetick: row.timetick,
        TickUpdate: row.tick_update,
        EventType: row.event_type,
        Data: data,
      })
      if (!wantedUsers || wantedUsers.has(row.addressee)) items.push(item(row.addressee, 0))
      if (row.app_id !== 0 && (!wantedApps || wantedApps.has(row.app_id))) items.push(item(0, row.app_id))
    }
    return { Events: items, LastTick: rows.length === limit ? rows.at(-1)!.tick_update : head }
  }

  /** Resolves when this instance committed events, or when the time is up (other instances' writes are seen by re-reading). */
  async function waitForCommit(ms: number, signal?: AbortSignal): Promise<void> {
    const timeout = AbortSignal.timeout(ms)
    const stop = signal ? AbortSignal.any([signal, timeout]) : timeout
    try {
      await once(committedEvents, 'committed', { signal: stop })
    } catch {
      // time is up or the caller went away
    }
  }

  return { append, committed, list, waitForCommit }
}

export type EventFeed = ReturnType<typeof createEventFeed>
