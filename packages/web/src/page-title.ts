import { useEffect } from 'preact/hooks'

/** The client's name, last in every tab title. */
export const APP_NAME = 'Atrium Chat'

/**
 * A tab title as messengers write them: the unread count first, so it shows in a narrow tab, then
 * the screen (the open chat's name), then the client: "(3) Alice · Atrium Chat".
 */
export function pageTitle(screen?: string, unread = 0): string {
  const count = unread > 0 ? `(${unread > 99 ? '99+' : unread}) ` : ''
  return `${count}${screen ? `${screen} · ` : ''}${APP_NAME}`
}

/** Keeps the document's title; undefined leaves it to a screen that sets its own. */
export function useTitle(title: string | undefined): void {
  useEffect(() => {
    if (title !== undefined) document.title = title
  }, [title])
}
