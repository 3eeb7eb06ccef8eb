/** The chat module's limit on a message's text, in characters (docs/chat-api.md, "Message length"). */
export const MAX_MESSAGE_LENGTH = 16_384

/** From this many characters left, the composer shows how many remain. */
export const SHOW_REMAINING_BELOW = 1_000

/** Characters as the chat module counts them: Unicode code points, so an emoji is one. */
export function characterCount(text: string): number {
  // Code points never outnumber UTF-16 units: most texts need no counting.
  if (text.length <= MAX_MESSAGE_LENGTH - SHOW_REMAINING_BELOW) return text.length
  let count = 0
  for (const _ of text) count++
  return count
}

/** Where a text stands against the limit: what to show, and whether it may be sent. */
export function lengthState(text: string) {
  const count = characterCount(text)
  const remaining = MAX_MESSAGE_LENGTH - count
  return { count, remaining, near: remaining <= SHOW_REMAINING_BELOW, over: remaining < 0 }
}

const number = new Intl.NumberFormat()

/** The counter's words: how many characters are left, or how many too many. */
export function lengthText(state: ReturnType<typeof lengthState>): string {
  if (state.over) {
    const excess = -state.remaining
    return `This message is ${number.format(excess)} ${excess === 1 ? 'character' : 'characters'} too long: messages hold at most ${number.format(MAX_MESSAGE_LENGTH)} characters. Shorten it or split it into several messages.`
  }
  return `${number.format(state.remaining)} ${state.remaining === 1 ? 'character' : 'characters'} left`
}
