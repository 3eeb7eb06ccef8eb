import type { UserView } from '../../api/auth-api.ts'
import type { ChatView } from '../../api/chat-types.ts'
import { usePeopleNames } from '../../people/people-names.ts'
import { typingText } from '../live/typing-board.ts'
import { senderName } from '../message/names.ts'

/**
 * "Alice is typing…" under the messages. The line is always there (a polite live region), so a
 * screen reader hears when someone starts typing without the layout jumping.
 */
export function TypingIndicator({ typers, chat, me }: { typers: string[]; chat: ChatView; me: UserView }) {
  const people = usePeopleNames()
  const names = typers.filter((user) => user !== me.crmId).map((user) => senderName(user, chat, me, people))
  return (
    <p class="typing-indicator" role="status" aria-live="polite">
      {typingText(names)}
    </p>
  )
}
