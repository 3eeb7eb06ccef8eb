/** A message longer than this many characters opens folded. */
export const LONG_MESSAGE_CHARACTERS = 1200
/** … or one of more lines than this. */
export const LONG_MESSAGE_LINES = 20

/**
 * Whether a message opens folded to its first lines with "Show more", as Slack and Teams fold long
 * posts: a 16,384-character message would otherwise fill several screens of the conversation.
 */
export function isLongMessage(content: string): boolean {
  if (content.length > LONG_MESSAGE_CHARACTERS) return true
  let lines = 1
  for (let index = content.indexOf('\n'); index !== -1; index = content.indexOf('\n', index + 1)) {
    if (++lines > LONG_MESSAGE_LINES) return true
  }
  return false
}
