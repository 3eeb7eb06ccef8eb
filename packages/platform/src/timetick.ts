/**
 * Timeticks: time-sortable 53-bit ids generated in-process (ARCHITECTURE.md, "Identifiers and time").
 *
 * Layout, from the high bits down: 41 bits of milliseconds since 2020-01-01T00:00:00Z (enough until
 * 2089), 5 bits of node number (0..31) and 7 bits of per-millisecond sequence (128 ids per
 * millisecond per node). Every id is a safe JavaScript integer, so ids from different modules and
 * nodes compare by time.
 */

/** Milliseconds since the Unix epoch of 2020-01-01T00:00:00Z, the timetick epoch. */
export const TIMETICK_EPOCH = Date.UTC(2020, 0, 1)

const NODE_BITS = 5
const SEQUENCE_BITS = 7
const TIME_BITS = 41

/** Number of distinct node numbers; a node number is 0 ≤ n < MAX_NODES. */
export const MAX_NODES = 2 ** NODE_BITS
const SEQUENCES = 2 ** SEQUENCE_BITS
const LOW_SPAN = 2 ** (NODE_BITS + SEQUENCE_BITS)
const MAX_ELAPSED = 2 ** TIME_BITS - 1

/** The largest possible timetick, Number.MAX_SAFE_INTEGER. */
export const MAX_TIMETICK = (MAX_ELAPSED + 1) * LOW_SPAN - 1

export interface TimetickOptions {
  /** This instance's node number, unique among instances of one module (0..31). */
  node: number
  /** Wall clock in epoch milliseconds; tests pass their own. */
  now?: () => number
  /**
   * For processes that share one node number (the `atrium` CLI runs): the sequence of each
   * millisecond is cut into `count` equal lanes (a power of two up to 128) and this generator uses
   * lane `index` only, borrowing the next millisecond when its lane is used up. Generators on
   * different lanes of one node never make the same id.
   */
  lane?: { index: number; count: number }
}

export type TimetickGenerator = () => number

/**
 * Returns a generator of strictly increasing timeticks for one node. When the sequence of a
 * millisecond is used up it borrows the next millisecond; when the wall clock steps back it keeps
 * counting from the last millisecond it used, so ids never go backwards.
 */
export function createTimetickGenerator({
  node,
  now = Date.now,
  lane = { index: 0, count: 1 },
}: TimetickOptions): TimetickGenerator {
  if (!Number.isInteger(node) || node < 0 || node >= MAX_NODES) {
    throw new RangeError(`timetick node number must be an integer from 0 to ${MAX_NODES - 1}, got ${node}`)
  }
  const { index, count } = lane
  if (!Number.isInteger(count) || count < 1 || count > SEQUENCES || (count & (count - 1)) !== 0) {
    throw new RangeError(`timetick lane count must be a power of two from 1 to ${SEQUENCES}, got ${count}`)
  }
  if (!Number.isInteger(index) || index < 0 || index >= count) {
    throw new RangeError(`timetick lane must be an integer from 0 to ${count - 1}, got ${index}`)
  }
  const perLane = SEQUENCES / count
  const lowBits = node * SEQUENCES + index * perLane
  let lastElapsed = -1
  let sequence = 0

  return function nextTimetick() {
    const elapsed = now() - TIMETICK_EPOCH
    if (elapsed > lastElapsed) {
      lastElapsed = elapsed
      sequence = 0
    } else if (++sequence === perLane) {
      lastElapsed++
      sequence = 0
    }
    if (lastElapsed > MAX_ELAPSED || lastElapsed < 0) {
      throw new RangeError('timetick clock is outside 2020-01-01 .. 2089')
    }
    return lastElapsed * LOW_SPAN + lowBits + sequence
  }
}

/** The smallest timetick of the given epoch-millisecond instant: ids ≥ it were made at or after it. */
export function timetickAt(epochMs: number): number {
  return Math.max(0, epochMs - TIMETICK_EPOCH) * LOW_SPAN
}

/** Epoch milliseconds at which a timetick was made. */
export function timetickTime(tick: number): number {
  return Math.floor(tick / LOW_SPAN) + TIMETICK_EPOCH
}

/** The node number that made a timetick. */
export function timetickNode(tick: number): number {
  return Math.floor(tick / SEQUENCES) % MAX_NODES
}

/** True when the value is a whole number in the timetick range. */
export function isTimetick(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0
}

/** Serialises a timetick for public JSON and event payloads, where ids travel as strings. */
export function timetickToString(tick: number): string {
  return String(tick)
}

const DECIMAL_ID = /^(0|[1-9][0-9]{0,15})$/

/** Parses a timetick from its string form; returns undefined for anything that is not one. */
export function parseTimetick(text: string): number | undefined {
  if (!DECIMAL_ID.test(text)) return undefined
  const tick = Number(text)
  return isTimetick(tick) ? tick : undefined
}

/** JSON-schema pattern of a timetick in its string form, for request schemas. */
export const TIMETICK_PATTERN = '^(0|[1-9][0-9]{0,15})$'
