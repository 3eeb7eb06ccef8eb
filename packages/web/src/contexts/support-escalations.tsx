import { useEffect, useState } from 'preact/hooks'
import type { ChatApi } from '../api/chat-api.ts'
import type { EscalationView } from '../api/contexts-api.ts'
import type { EventBus } from '../chat/live/event-bus.ts'
import { fallbackName } from '../people/people-names.ts'
import { Link } from '../router/link.tsx'
import { routePath } from '../router/routes.ts'

interface SupportEscalationsProps {
  api: Pick<ChatApi, 'getSupportEscalations'>
  bus: EventBus
}

/** How long someone has waited, in words. */
function waited(seconds: number): string {
  if (seconds < 60) return `${seconds} s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`
}

/** A refresh at least this often, and more often when escalations come quicker (a short EscalateAfterSeconds). */
const MAX_REFRESH_MS = 30_000

/**
 * For support team members: the support chats whose customer has waited longer than the chat
 * module's Support.EscalateAfterSeconds for an answer. Escalations follow the clock, so the list is
 * asked for again on a timer, and at once when a message arrives.
 */
export function SupportEscalations({ api, bus }: SupportEscalationsProps) {
  const [escalations, setEscalations] = useState<EscalationView[]>([])
  const [refreshMs, setRefreshMs] = useState(MAX_REFRESH_MS)
  const [version, setVersion] = useState(0)

  useEffect(() => {
    let current = true
    api
      .getSupportEscalations()
      .then((answer) => {
        if (!current) return
        setEscalations(answer.escalations)
        setRefreshMs(Math.min(MAX_REFRESH_MS, Math.max(1000, (answer.escalate_after_seconds * 1000) / 4)))
      })
      .catch(() => current && setEscalations([]))
    return () => {
      current = false
    }
  }, [api, version])

  useEffect(() => {
    const timer = setInterval(() => setVersion((value) => value + 1), refreshMs)
    const stop = bus.subscribe((event) => {
      if (event === 'resync' || event.type === 'NewChatMessage' || event.type === 'MessageDeleted') {
        setVersion((value) => value + 1)
      }
    })
    return () => {
      clearInterval(timer)
      stop()
    }
  }, [bus, refreshMs])

  if (escalations.length === 0) return null
  return (
    <section class="escalations" aria-labelledby="escalations-heading">
      <h2 id="escalations-heading">Waiting for an answer ({escalations.length})</h2>
      <ul class="escalation-list">
        {escalations.map((escalation) => (
          <li key={escalation.chat_id}>
            <Link href={routePath({ name: 'messenger', chatId: escalation.chat_id })}>
              {escalation.customer_name || fallbackName(escalation.customer)}
            </Link>{' '}
            <span class="escalation-wait">waiting {waited(escalation.waiting_seconds)}</span>
            <span class="escalation-text">{escalation.content}</span>
          </li>
        ))}
      </ul>
    </section>
  )
}
