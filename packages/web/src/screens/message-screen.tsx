import type { ComponentChildren } from 'preact'
import { Link } from '../router/link.tsx'
import { MOUNT } from '../router/routes.ts'

interface MessageScreenProps {
  title: string
  children: ComponentChildren
  /** Offer a way back to the messenger (default true). */
  back?: boolean
}

/** A full-page notice: a route that is not built yet or turned off, a missing page, a failure. */
export function MessageScreen({ title, children, back = true }: MessageScreenProps) {
  return (
    <main class="notice">
      <h1>{title}</h1>
      <div class="notice-body">{children}</div>
      {back && (
        <p>
          <Link href={MOUNT}>Back to the messenger</Link>
        </p>
      )}
    </main>
  )
}
