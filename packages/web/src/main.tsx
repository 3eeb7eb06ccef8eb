import { render } from 'preact'
import { deviceGuid } from './api/device.ts'
import { failureText } from './api/envelope.ts'
import { App } from './app.tsx'
import { loadClientConfig } from './config/client-config.ts'
import { MessageScreen } from './screens/message-screen.tsx'
import { createServices } from './services.ts'
import './styles.css'

function localStorageOrNone(): Storage | undefined {
  try {
    return window.localStorage
  } catch {
    return undefined
  }
}

/** Starts the client: the configuration and the session are read in parallel, then the route's screen shows. */
async function start(root: HTMLElement) {
  const services = createServices(deviceGuid(localStorageOrNone()))
  const [{ config, problems }, session] = await Promise.all([
    loadClientConfig(`${import.meta.env.BASE_URL}config.json`),
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
  render(<App services={services} config={config} initialUser={session.value?.user} />, root)
}

start(document.getElementById('app')!)
