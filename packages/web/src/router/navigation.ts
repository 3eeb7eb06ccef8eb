import { useEffect, useState } from 'preact/hooks'
import { isServerPage, parseRoute, type Route } from './routes.ts'

const NAVIGATED = 'atrium:navigated'

/**
 * Moves the page to `path` without reloading (history API); `replace` keeps the back button where
 * it was. A server page (an operator page after sign-in) is loaded by the browser instead.
 */
export function navigate(path: string, { replace = false } = {}): void {
  if (isServerPage(path)) {
    if (replace) location.replace(path)
    else location.assign(path)
    return
  }
  if (path === `${location.pathname}${location.search}`) return
  if (replace) history.replaceState(null, '', path)
  else history.pushState(null, '', path)
  window.dispatchEvent(new Event(NAVIGATED))
}

function currentRoute(): Route {
  return parseRoute(location.pathname, location.search)
}

/** The route of the current location, updated on navigate() and on back/forward. */
export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute)
  useEffect(() => {
    const update = () => setRoute(currentRoute())
    window.addEventListener('popstate', update)
    window.addEventListener(NAVIGATED, update)
    // Children's effects run first: a redirect made before this subscription is picked up here.
    update()
    return () => {
      window.removeEventListener('popstate', update)
      window.removeEventListener(NAVIGATED, update)
    }
  }, [])
  return route
}
