import { Type } from 'typebox'
import { ApiError } from './errors.ts'
import { isTimetick } from './timetick.ts'

/**
 * Event contracts shared by the modules and the gateway (spec: "BroadcastEvent", "EventBatch",
 * "Module events endpoint"). A module's `GET /private/v1/events` answers an EventBatch; the
 * gateway's poller turns each item into a BroadcastEvent once and fans it out.
 */

/** One addressed item of an EventBatch: the event for one user (CrmId) or one app (AppId). */
export interface EventBatchItem {
  /** CRM id (or guest id) the item is for; 0 for app items. */
  CrmId: number
  /** App the item is for; 0 when not app-addressed. */
  AppId: number
  /** Event id: when the event was recorded. */
  Timetick: number
  /** The cursor value of the event. */
  TickUpdate: number
  EventType: string
  Data: Record<string, unknown>
  /**
   * Beyond the spec: the addressee muted the chat (MemberRole.Muted). The event is still theirs
   * (their streams show it), but no notification is made of it (Web Push). Absent when not muted.
   */
  Muted?: boolean
}

/** What a module's events endpoint returns; `LastTick` is the `since` of the next call. */
export interface EventBatch {
  Events: EventBatchItem[]
  LastTick: number
}

/** Schema of an EventBatch (the envelope's `result`), for modules' events endpoints. */
export const EventBatchSchema = Type.Object({
  Events: Type.Array(
    Type.Object({
      CrmId: Type.Integer({ minimum: 0 }),
      AppId: Type.Integer({ minimum: 0 }),
      Timetick: Type.Integer({ minimum: 0 }),
      TickUpdate: Type.Integer({ minimum: 0 }),
      EventType: Type.String(),
      Data: Type.Object({}, { additionalProperties: true }),
      Muted: Type.Optional(Type.Boolean({ description: 'The addressee muted the chat: no notification for it.' })),
    }),
  ),
  LastTick: Type.Integer({ minimum: 0 }),
})

/** The SSE message of spec "BroadcastEvent": one event as the browser receives it. */
export interface BroadcastEvent {
  /** Producing module, e.g. `chat`, `wallet`. */
  module: string
  /** The event's cursor tick (its TickUpdate); the client keeps the largest it has seen. */
  tick: number
  type: string
  data: Record<string, unknown>
}

/** Normalises one EventBatch item of a module into the BroadcastEvent every channel uses. */
export function toBroadcastEvent(module: string, item: EventBatchItem): BroadcastEvent {
  return { module, tick: item.TickUpdate, type: item.EventType, data: item.Data }
}

/** One event of a webhook payload (spec: "Webhook payload"). */
export interface WebhookEvent {
  module: string
  /** The event's cursor tick (its TickUpdate). */
  tick: number
  type: string
  /** The app the event is addressed to. */
  app_id: number
  data: Record<string, unknown>
}

/** The body of a webhook request (spec: "Webhook payload"), signed in X-Signature. */
export interface WebhookPayload {
  events: WebhookEvent[]
}

/** Normalises one app-addressed EventBatch item of a module into a webhook event. */
export function toWebhookEvent(module: string, item: EventBatchItem): WebhookEvent {
  return { module, tick: item.TickUpdate, type: item.EventType, app_id: item.AppId, data: item.Data }
}

/** Kinds of capability subject: a CRM user, a verified app, an anonymous chat invite (guest). */
export type SubjectKind = 'user' | 'app' | 'code'

/** A capability subject as the events endpoint takes it, e.g. `user:1001`. */
export type Subject = `${SubjectKind}:${number}`

const SUBJECT = /^(user|app|code):([1-9][0-9]{0,15})$/

/** Builds the subject of a user, app or guest id. */
export function subjectOf(kind: SubjectKind, id: number): Subject {
  return `${kind}:${id}`
}

/** Splits a subject into kind and id; undefined for anything that is not `user:`, `app:` or `code:` with an id. */
export function parseSubject(text: string): { kind: SubjectKind; id: number } | undefined {
  const match = SUBJECT.exec(text)
  if (!match) return undefined
  const id = Number(match[2])
  return isTimetick(id) ? { kind: match[1] as SubjectKind, id } : undefined
}

/** The limits a module sets on its events endpoint. */
export interface EventsQueryLimits {
  defaultLimit: number
  maxLimit: number
  maxWaitMs: number
}

/** The settings of a module's events endpoint (each module's `Events` section has these properties). */
export const moduleEventsSettings = {
  DefaultLimit: Type.Integer({
    default: 100,
    minimum: 1,
    maximum: 10_000,
    description: 'Events per /private/v1/events call when limit is not given.',
  }),
  MaxLimit: Type.Integer({
    default: 1000,
    minimum: 1,
    maximum: 10_000,
    description: 'Largest accepted limit of /private/v1/events.',
  }),
  MaxWaitMs: Type.Integer({
    default: 30_000,
    minimum: 0,
    maximum: 300_000,
    description: 'Longest accepted wait (long-poll) of /private/v1/events, in ms.',
  }),
}

/** Schema of the query of a module's `GET /private/v1/events` (spec: "Module events endpoint"). */
export function eventsQuerySchema({ defaultLimit, maxLimit, maxWaitMs }: EventsQueryLimits) {
  return Type.Object(
    {
      since: Type.Integer({ minimum: 0, default: 0, description: 'Cursor: events with TickUpdate above it.' }),
      subjects: Type.Optional(
        Type.String({ maxLength: 65_536, description: 'Comma-separated user:, app:, code: subjects.' }),
      ),
      users: Type.Optional(Type.String({ maxLength: 65_536, description: 'Legacy alias: comma-separated user ids.' })),
      apps: Type.Optional(Type.String({ maxLength: 65_536, description: 'Legacy alias: comma-separated app ids.' })),
      limit: Type.Integer({
        minimum: 1,
        maximum: maxLimit,
        default: defaultLimit,
        description: 'Most events (items) returned; a stored event’s items are never split across batches.',
      }),
      wait: Type.Integer({
        minimum: 0,
        maximum: maxWaitMs,
        default: 0,
        description: 'Long-poll: ms to wait for an event.',
      }),
    },
    { additionalProperties: false },
  )
}

/**
 * The subjects of an events query: `subjects` and the legacy `users` and `apps` aliases, parsed;
 * undefined when none is given (every addressee). A malformed subject is InvalidRequest.
 */
export function querySubjects(query: {
  subjects?: string
  users?: string
  apps?: string
}): { kind: SubjectKind; id: number }[] | undefined {
  if (query.subjects === undefined && query.users === undefined && query.apps === undefined) return undefined
  const items = [
    ...(query.subjects ?? '').split(','),
    ...(query.users ?? '').split(',').map((id) => id && `user:${id.trim()}`),
    ...(query.apps ?? '').split(',').map((id) => id && `app:${id.trim()}`),
  ].filter((item) => item.trim() !== '')
  return items.map((item) => {
    const subject = parseSubject(item.trim())
    if (!subject) {
      throw new ApiError('InvalidRequest', `subject ${JSON.stringify(item)} is not user:<id>, app:<id> or code:<id>`)
    }
    return subject
  })
}

function isIdField(value: unknown): value is number {
  return isTimetick(value)
}

/**
 * Checks that a value received as a module's EventBatch has that shape (integers where the contract
 * says so, an object as Data) and returns it typed; throws a TypeError naming the first problem.
 */
export function parseEventBatch(value: unknown): EventBatch {
  const batch = value as Partial<EventBatch> | null
  if (typeof batch !== 'object' || batch === null) throw new TypeError('EventBatch is not an object')
  if (!isIdField(batch.LastTick)) throw new TypeError('EventBatch.LastTick is not a tick')
  if (!Array.isArray(batch.Events)) throw new TypeError('EventBatch.Events is not an array')
  batch.Events.forEach((item: Partial<EventBatchItem> | null, index) => {
    const where = `EventBatch.Events[${index}]`
    if (typeof item !== 'object' || item === null) throw new TypeError(`${where} is not an object`)
    for (const field of ['CrmId', 'AppId', 'Timetick', 'TickUpdate'] as const) {
      if (!isIdField(item[field])) throw new TypeError(`${where}.${field} is not an id`)
    }
    if (typeof item.EventType !== 'string' || item.EventType === '')
      throw new TypeError(`${where}.EventType is not a name`)
    if (typeof item.Data !== 'object' || item.Data === null || Array.isArray(item.Data)) {
      throw new TypeError(`${where}.Data is not an object`)
    }
    if (item.Muted !== undefined && typeof item.Muted !== 'boolean')
      throw new TypeError(`${where}.Muted is not a boolean`)
  })
  return batch as EventBatch
}
