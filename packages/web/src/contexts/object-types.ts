import { FeedbackType } from '@atrium/platform/flags'

/**
 * The {type} of /chat/feedback/{type}/{id} and /chat/discuss/{type}/{id}: a FeedbackType, written
 * as its number ("4") or its name in any case ("order"). Links should use the lower-case name.
 */
const BY_NAME = new Map<string, number>(
  Object.entries(FeedbackType).map(([name, value]) => [name.toLowerCase(), value]),
)
const NAMES = new Map<number, string>(Object.entries(FeedbackType).map(([name, value]) => [value, name]))

/** The FeedbackType a path segment names, or undefined when it names none. */
export function parseObjectType(segment: string): number | undefined {
  if (/^[0-9]+$/.test(segment)) return NAMES.has(Number(segment)) ? Number(segment) : undefined
  return BY_NAME.get(segment.toLowerCase())
}

/** How a person reads an object type: "order" for 4. */
export function objectTypeWord(type: number): string {
  return (NAMES.get(type) ?? 'object').toLowerCase()
}
