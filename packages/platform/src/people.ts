/**
 * The name others see for a person (docs/people.md): their display name, or, while they have
 * chosen none, "User" and the last four digits of their id. Never an email address or phone
 * number: the people who see the name may not know them.
 */
export function shownName(member: number | string, name: string | undefined): string {
  if (name) return name
  return `User ${String(member).slice(-4)}`
}

/** Control characters would let a name break the layout of a list; names are one line of text. */
export const DISPLAY_NAME_PATTERN = '^[^\\u0000-\\u001f\\u007f]+$'
/** Longest display name, in characters. */
export const DISPLAY_NAME_MAX = 100
