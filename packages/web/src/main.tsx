import { render } from 'preact'
import { chooseAddress } from './api/address-choice.ts'
import { deviceGuid } from './api/device.ts'
import { failureText } from './api/envelope.ts'
import { App } from './app.tsx'
import { loadClientConfig } from './config/client-config.ts'
import { earlyFetch } from './early-requests.ts'
import { readFirstData } from './first-data.ts'
import { renewPush } from './notifications/web-push.ts'
import { MessageScreen } from './screens/message-screen.tsx'
import { createServices } from './services.ts'
import { localStorageOrNone, rememberSignedIn } from './start-up.ts'
import './styles.css'
import './files/files.css'
import './chat/chat-list/chat-list.css'
import './chat/switcher/switcher.css'
import './chat/emoji/emoji.css'
import './chat/conversation/conversation.css'
import './people/people.css'
import './chat/profile/profile.css'
import './calls/calls.css'

/**
 * Starts the client: on the project domain itself, the page moves to the fastest gateway address
 * first. Then the configuration and the session are read in parallel, then the route's
 * screen shows. The first calls take what index.html's start-up script already asked for (the
 * session, config.json and, when this browser was signed in before, the chat list and the open
 * chat's first page; see early-requests.ts).
 */
async function start(root: HTMLElement) {
  const storage = localStorageOrNone()
  // On the project domain itself, the page first moves to the fastest gateway address (p1, p2 or
  // p3) and stays there: API, events and the session cookie on one origin (api/address-choice.ts).
  const address = await chooseAddress({ location, domain: import.meta.env.ATRIUM_DOMAIN ?? '', storage })
  if (address !== undefined) {
    location.replace(`${address}${location.pathname}${location.search}${location.hash}`)
    return
  }
  const send = earlyFetch(window.atriumEarly, (...args) => fetch(...args))
  const services = createServices(deviceGuid(storage), '', send)
  const [{ config, problems }, session] = await Promise.all([
    loadClientConfig(`${import.meta.env.BASE_URL}config.json`, send),
    services.auth.session().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
  ])
  for (const problem of problems) console.warn(`Atrium Chat configuration: ${problem}`)
  if ('error' in session) {
    render(
      <MessageScreen title="Atrium Chat could not start" back={false}>
        <p>{failureText(session.error)}</p>
        <button type="button" onClick={() => location.reload()}>
          Try again
        </button>
      </MessageScreen>,
      root,
    )
    return
  }
  // Signed out with the hint set (a stale hint): the chat list start-up asked for (a 401) is never taken.
  const signedIn = session.value !== undefined
  rememberSignedIn(storage, signedIn)
  const firstData = signedIn ? await readFirstData(window.atriumEarly, services.chat, location) : undefined
  render(
    <App
      services={services}
      config={config}
      initialUser={session.value?.user}
      firstData={firstData}
      onSession={(signedIn) => rememberSignedIn(storage, signedIn)}
    />,
    root,
  )
  // Never a permission prompt here: only a browser that allowed notifications renews its subscription.
  if (signedIn) renewPush(services.auth).catch((error: unknown) => console.warn(`Atrium Chat notifications: ${error}`))
}

start(document.getElementById('app')!)
