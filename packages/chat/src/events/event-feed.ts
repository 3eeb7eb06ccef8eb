import { EventEmitter } from 'node:events'
import {
  compiledOnce,
  type Database,
  type EventBatchItem,
  type TimetickGenerator,
  timetickTime,
} from '@atrium/platform'
import { type Insertable, type Kysely, sql } from 'kysely'
import type { ChatDatabase, ChatEventsTable } from '../db/schema.ts'
import { isMuted } from '../members/personal-role.ts'

/** An event a chat operation records in its own transaction. */
export interface ChatEventInput {
  chat_id: number
  type: ChatEventType
  data: Record<string, unknown>
  /** One member the event is for; omitted: every member of the chat at read time. */
  addressee?: number
  app_id?: number
}

/** Event types of the chat module (docs/chat-api.md, "Events"). */
export type ChatEventType =
  | 'NewChatMessage'
  | 'MessageEdited'
  | 'MessageDeleted'
  | 'MessagePinned'
  | 'MessageUnpinned'
  | 'ReactionChanged'
  | 'MessageRead'
  | 'ChatCreated'
  | 'ChatUpdated'
  | 'ChatArchived'
  | 'ChatDeleted'
  | 'MemberAdded'
  | 'MemberRemoved'
  | 'MemberUpdated'
  | 'ProfileChanged'
  | 'CallUpdated'
  | 'CallSignal'

/**
 * An EventBatchItem as the feed reads it: the event's data stays JSON text, with `tick` (the cursor
 * value as a string) added, and is sent as it is, not parsed and serialised again. The items of one
 * event share this string.
 */
export type FeedItem = Omit<EventBatchItem, 'Data'> & { DataJson: string }

export interface FeedBatch {
  Events: FeedItem[]
  LastTick: number
}

/** Capability subjects of an events request, already split by kind. */
export interface Subjects {
  /** CRM ids (user:) and guest ids (code:): both are chat member ids. */
  members: number[]
  apps: number[]
}

/**
 * Who the events that became readable after a tick concern: their addressees, the members of the
 * chats of their chat-wide events, and their apps; `everyone` when that was too much to list.
 */
export interface Touched {
  head: number
  everyone: boolean
  members: Set<number>
  apps: Set<number>
}

export interface ListOptions {
  since: number
  /** Omitted: every addressee. */
  subjects?: Subjects
  limit: number
}

const SEQUENCE_BATCH = 1000
/** Rows one statement of `pruneBefore` deletes at most. */
const PRUNE_BATCH = 5000
/** Past this many new events, or members of their chats, `touched` answers `everyone` instead of listing them. */
const TOUCHED_MAX_EVENTS = 1000
const TOUCHED_MAX_MEMBERS = 10_000
/** A fixed key for pg_advisory_xact_lock: one sequencer at a time across every chat instance. */
export const SEQUENCER_LOCK = 7_310_225_001

// Both run on every send on SQLite (compiled-once.ts).
const insertEvent = compiledOnce(
  ['timetick', 'tick_update', 'chat_id', 'addressee', 'app_id', 'event_type', 'data'],
  (db: Kysely<ChatDatabase>, row: Insertable<ChatEventsTable>) => db.insertInto('chat_events').values(row),
)
const newestTick = compiledOnce([], (db: Kysely<ChatDatabase>, _: object) =>
  db.selectFrom('chat_events').select((eb) => eb.fn.max('tick_update').as('max')),
)

/**
 * The chat module's event feed. A reader must never skip an event, so a row's cursor tick
 * (tick_update) must be above every cursor a reader could have seen when the row becomes visible.
 *
 * PostgreSQL: writers append rows with tick_update = 0 inside their own transactions; after commit
 * the sequencer gives committed rows increasing ticks under an advisory lock, so a row that commits
 * late gets a later cursor instead of one a reader already passed. Readers see only sequenced rows.
 *
 * SQLite: a transaction holds the database's one write lock from BEGIN IMMEDIATE to COMMIT, so no
 * other writer can commit in between, and the tick is assigned when the row is written.
 */
export function createEventFeed(database: Database<ChatDatabase>, nextTick: TimetickGenerator) {
  const { db, dialect } = database
  const sequenced = new EventEmitter()
  sequenced.setMaxListeners(0)
  let running: Promise<void> | undefined
  let again = false

  async function append(trx: Kysely<ChatDatabase>, event: ChatEventInput): Promise<number> {
    if ('tick' in event.data) throw new Error('event data must not have a tick of its own: the feed adds it')
    const timetick = nextTick()
    const tickUpdate = dialect === 'sqlite' ? Math.max(timetick, (await headTick(trx)) + 1) : 0
    await insertEvent(trx, {
      timetick,
      tick_update: tickUpdate,
      chat_id: event.chat_id,
      addressee: event.addressee ?? 0,
      app_id: event.app_id ?? 0,
      event_type: event.type,
      data: JSON.stringify(event.data),
    })
    return timetick
  }

  // PostgreSQL only: one call of the chat_sequence_events function (migration 0005), which takes
  // the advisory lock and gives committed unsequenced rows increasing ticks above the head.
  async function sequenceOnce(): Promise<number> {
    const { rows } = await sql<{
      n: number
    }>`select chat_sequence_events(${nextTick()}, ${SEQUENCE_BATCH}) as n`.execute(db)
    return Number(rows[0]?.n ?? 0)
  }

  /** Makes committed rows readable and wakes long-polls; call after every commit that appended. */
  async function committed(): Promise<void> {
    if (dialect === 'postgres') return sequence()
    sequenced.emit('sequenced')
  }

  /** Wakes long-polls after a commit whose rows were sequenced in their own transaction. */
  function announce(): void {
    sequenced.emit('sequenced')
  }

  /** Sequences every committed row; concurrent calls share one run and a call during a run causes one more. */
  function sequence(): Promise<void> {
    if (running) {
      again = true
      return running
    }
    running = (async () => {
      try {
        do {
          again = false
          while ((await sequenceOnce()) === SEQUENCE_BATCH) {}
        } while (again)
      } finally {
        running = undefined
        sequenced.emit('sequenced')
      }
    })()
    return running
  }

  async function headTick(from: Kysely<ChatDatabase> = db): Promise<number> {
    const [row] = (await newestTick(from, {})).rows
    return Number(row?.max ?? 0)
  }

  async function list({ since, subjects, limit }: ListOptions): Promise<FeedBatch> {
    // The head is read first: rows sequenced while this runs are left for the next call, never skipped.
    const head = await headTick()
    if (head <= since) return { Events: [], LastTick: since }
    const members = subjects?.members ?? []
    const apps = subjects?.apps ?? []
    let query = db
      .selectFrom('chat_events')
      .selectAll()
      .where('tick_update', '>', since)
      .where('tick_update', '<=', head)
      .orderBy('tick_update')
      .limit(limit)
    if (subjects) {
      if (members.length === 0 && apps.length === 0) return { Events: [], LastTick: head }
      query = query.where((eb) =>
        eb.or([
          ...(members.length > 0
            ? [
                eb('addressee', 'in', members),
                eb.and([
                  eb('addressee', '=', 0),
                  eb('chat_id', 'in', eb.selectFrom('chat_members').select('chat_id').where('member', 'in', members)),
                ]),
              ]
            : []),
          ...(apps.length > 0 ? [eb('app_id', 'in', apps)] : []),
        ]),
      )
    }
    const rows = await query.execute()
    const { items, rowsUsed } = await addressRows(rows, subjects, limit)
    // Cut before the rows read: the next call starts after the last row whose items were taken.
    const lastTick = rowsUsed < rows.length || rows.length === limit ? rows[rowsUsed - 1]!.tick_update : head
    return { Events: items, LastTick: lastTick }
  }

  /**
   * Who the events after `after`, up to the head, concern. Chat-wide events concern the chat's
   * members as they are now, a superset of those the feed gives them to (members who joined after
   * the event do not receive it): a caller may wake too many readers, never too few.
   */
  async function touched(after: number): Promise<Touched> {
    const head = await headTick()
    const result: Touched = { head, everyone: false, members: new Set(), apps: new Set() }
    if (head <= after) return result
    const rows = await db
      .selectFrom('chat_events')
      .select(['chat_id', 'addressee', 'app_id'])
      .where('tick_update', '>', after)
      .where('tick_update', '<=', head)
      .limit(TOUCHED_MAX_EVENTS + 1)
      .execute()
    if (rows.length > TOUCHED_MAX_EVENTS) return { ...result, everyone: true }
    const chatWide = new Set<number>()
    for (const row of rows) {
      if (row.addressee !== 0) result.members.add(row.addressee)
      else chatWide.add(row.chat_id)
      if (row.app_id !== 0) result.apps.add(row.app_id)
    }
    if (chatWide.size > 0) {
      const members = await db
        .selectFrom('chat_members')
        .select('member')
        .where('chat_id', 'in', [...chatWide])
        .limit(TOUCHED_MAX_MEMBERS + 1)
        .execute()
      if (members.length > TOUCHED_MAX_MEMBERS) return { ...result, everyone: true }
      for (const { member } of members) result.members.add(member)
    }
    return result
  }

  /**
   * The items of `rows` in order, one per addressee, and how many rows they come from. `limit` bounds
   * the items (spec: "maximum events to return"), in whole rows: a row's items share its cursor
   * tick, so they are never split across batches, and the first row is taken whatever its size.
   * Without that bound a chat-wide event of a large channel read without subjects became one item
   * per member for each of up to `limit` rows.
   */
  async function addressRows(
    rows: ChatDatabase['chat_events'][],
    subjects: Subjects | undefined,
    limit: number,
  ): Promise<{ items: FeedItem[]; rowsUsed: number }> {
    const chatWide = [...new Set(rows.filter((row) => row.addressee === 0).map((row) => row.chat_id))]
    const wanted = subjects ? new Set(subjects.members) : undefined
    const wantedApps = subjects ? new Set(subjects.apps) : undefined
    const membersByChat = new Map<number, { member: number; joined: number; role: number; muted_until: number }[]>()
    // With subjects, only the members among them are addressed; app-only subjects address no member.
    if (chatWide.length > 0 && (!subjects || subjects.members.length > 0)) {
      let memberQuery = db
        .selectFrom('chat_members')
        .select(['chat_id', 'member', 'joined', 'role', 'muted_until'])
        .where('chat_id', 'in', chatWide)
      if (subjects) memberQuery = memberQuery.where('member', 'in', subjects.members)
      for (const row of await memberQuery.execute()) {
        const list = membersByChat.get(row.chat_id) ?? []
        list.push(row)
        membersByChat.set(row.chat_id, list)
      }
    }
    const items: FeedItem[] = []
    let rowsUsed = 0
    for (const row of rows) {
      const before = items.length
      const data = withTick(row.data, row.tick_update)
      const item = (crmId: number, appId: number, muted = false): FeedItem => ({
        CrmId: crmId,
        AppId: appId,
        Timetick: row.timetick,
        TickUpdate: row.tick_update,
        EventType: row.event_type,
        DataJson: data,
        ...(muted ? { Muted: true } : {}),
      })
      if (row.addressee !== 0) {
        if (!wanted || wanted.has(row.addressee)) items.push(item(row.addressee, 0))
      } else {
        // Members who joined after the event do not receive it.
        // Muted: the member's mute covers the event's time (members/personal-role.ts).
        const at = timetickTime(row.timetick)
        for (const member of membersByChat.get(row.chat_id) ?? []) {
          if (member.joined <= row.timetick) items.push(item(member.member, 0, isMuted(member, at)))
        }
      }
      if (row.app_id !== 0 && (!wantedApps || wantedApps.has(row.app_id))) items.push(item(0, row.app_id))
      if (items.length > limit && rowsUsed > 0) {
        items.length = before
        break
      }
      rowsUsed++
      if (items.length >= limit) break
    }
    return { items, rowsUsed }
  }

  /**
   * Deletes the events whose cursor tick is below `tick`, PRUNE_BATCH rows per statement (SQLite's
   * write lock is held for one batch at a time); returns how many went. The newest row always stays,
   * since its tick is the head that `append` and the PostgreSQL sequencer continue from, and so do
   * rows not sequenced yet (tick 0).
   */
  async function pruneBefore(tick: number): Promise<number> {
    const below = Math.min(tick, await headTick())
    let deleted = 0
    for (;;) {
      const result = await db
        .deleteFrom('chat_events')
        .where('timetick', 'in', (eb) =>
          eb
            .selectFrom('chat_events')
            .select('timetick')
            .where('tick_update', '>', 0)
            .where('tick_update', '<', below)
            .limit(PRUNE_BATCH),
        )
        .executeTakeFirst()
      const rows = Number(result.numDeletedRows)
      deleted += rows
      if (rows < PRUNE_BATCH) return deleted
    }
  }

  /**
   * Calls `listener` each time newly committed events became readable here (other instances' writes
   * are seen only by re-reading); returns the function that stops the calls.
   */
  function onSequenced(listener: () => void): () => void {
    sequenced.on('sequenced', listener)
    return () => sequenced.off('sequenced', listener)
  }

  /**
   * The newest tick readers can see now. Everything at or below it was committed before this
   * answer; an event committed later (on PostgreSQL one still waiting for the sequencer, too) gets
   * a tick above it. So a read that starts after `head()` sees every event up to it, and a stream
   * resumed with since=<head> replays the rest.
   */
  const head = () => headTick()

  return { append, committed, announce, list, touched, pruneBefore, onSequenced, head }
}

export type EventFeed = ReturnType<typeof createEventFeed>

/**
 * Adds `"tick": "<cursor>"` to an event's stored data, an object serialised by JSON.stringify (so
 * without whitespace, and never with a tick of its own: `append` refuses one).
 */
export function withTick(data: string, tick: number): string {
  if (data === '{}') return `{"tick":"${tick}"}`
  if (!data.endsWith('}')) throw new Error(`event data is not a JSON object: ${data.slice(0, 40)}`)
  return `${data.slice(0, -1)},"tick":"${tick}"}`
}
