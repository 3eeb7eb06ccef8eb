export {
  type BroadcastEvent,
  type EventSourceConstructor,
  type EventSourceLike,
  type LiveEvents,
  type LiveEventsOptions,
  type LiveStatus,
  openLiveEvents,
  type Resync,
  type TickStorage,
} from './live-events.ts'
