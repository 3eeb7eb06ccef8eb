/**
 * Initials of a name: the first letters of its first two words that start with a letter
 * ("Alice Archer" → "AA"; "User 4821", the name of someone without a display name, → "U").
 */
export function initials(name: string): string {
  const words = name
    .trim()
    .split(/\s+/)
    .filter((word) => /^\p{L}/u.test(word))
  const letters = words.slice(0, 2).map((word) => [...word][0] ?? '')
  return letters.join('').toUpperCase() || '?'
}

/** A stable hue for an id, so a person keeps their colour everywhere. */
export function avatarHue(id: string): number {
  let hash = 0
  for (const char of id) hash = (hash * 31 + char.charCodeAt(0)) % 360
  return hash
}

/**
 * Saturation and lightness (%) of every avatar's background: at these, white initials keep a
 * contrast of at least 5:1 on any hue (WCAG AA asks 4.5:1 for text), whatever the id.
 */
export const AVATAR_TONE = { saturation: 50, lightness: 30 } as const

/** The avatar background of an id, as CSS. */
export function avatarColor(id: string): string {
  return `hsl(${avatarHue(id)} ${AVATAR_TONE.saturation}% ${AVATAR_TONE.lightness}%)`
}
