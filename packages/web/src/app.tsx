import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import type { SignedIn, UserView } from './api/auth-api.ts'
import { pageDrafts } from './chat/conversation/drafts.ts'
import { Messenger, type MessengerContext } from './chat/messenger.tsx'
import { type ClientConfig, featuresOf } from './config/client-config.ts'
import { contextScreens } from './contexts/context-screens.tsx'
import type { FirstData } from './first-data.ts'
import { pageTitle, useTitle } from './page-title.ts'
import { lazy } from './router/lazy.tsx'
import { navigate, useRoute } from './router/navigation.ts'
import { MOUNT, type Route, routePath, safeNext } from './router/routes.ts'
import { MessageScreen } from './screens/message-screen.tsx'
import { Unavailable } from './screens/unavailable.tsx'
import type { Services } from './services.ts'

interface AppProps {
  services: Services
  config: ClientConfig
  /** The signed-in user at start, if any. */
  initialUser: UserView | undefined
  /** The chat list and open chat's first page, read before the first render (first-data.ts). */
  firstData?: FirstData
  /** Told when the user signs in or out (main.tsx keeps a hint for the next start). */
  onSession?: (signedIn: boolean) => void
}

// Screens other than the messenger load from their own chunks when first shown, so the script
// the messenger's first render waits for stays small (bench/web-render.ts).
const AccountPage = lazy(() => import('./account/account-page.tsx').then((module) => module.AccountPage))
const CallHistory = lazy(() => import('./calls/call-history.tsx').then((module) => module.CallHistory))
const FileBrowser = lazy(() => import('./files/file-browser.tsx').then((module) => module.FileBrowser))
const GuestPage = lazy(() => import('./guest/guest-page.tsx').then((module) => module.GuestPage))
const SignInPage = lazy(() => import('./sign-in/sign-in-page.tsx').then((module) => module.SignInPage))

/** Moves to `path` once rendered (a redirect decided while rendering). */
function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to])
  return null
}

/** Tab titles of the screens that are not the messenger's (it sets its own: the open chat, the unread count). */
const SCREEN_TITLES: Partial<Record<Route['name'], string>> = {
  'sign-in': pageTitle('Sign in'),
  account: pageTitle('Account'),
  guest: pageTitle('Guest'),
  feedback: pageTitle('Feedback'),
  files: pageTitle('Files'),
  'not-found': pageTitle('Page not found'),
}

/** The path of the current location, for the sign-in page to come back to (at the message a link names). */
function here(): string {
  return `${location.pathname}${location.search}${location.hash}`
}

/** The client: picks the screen of the route (spec: "Chat client routes") for the signed-in user and the mode. */
export function App({ services, config, initialUser, firstData, onSession }: AppProps) {
  const route = useRoute()
  const [user, setUser] = useState(initialUser)
  const features = featuresOf(config)

  function signedIn(result: SignedIn) {
    setUser(result.user)
    onSession?.(true)
    navigate(safeNext(result.returnTo), { replace: true })
  }

  function signedOut() {
    // The next person on this browser finds none of this one's unsent messages.
    if (user) pageDrafts().forget(user.crmId)
    setUser(undefined)
    onSession?.(false)
    navigate(routePath({ name: 'sign-in', next: MOUNT }), { replace: true })
  }

  const needsUser = (screen: () => JSX.Element) =>
    user ? screen() : <Redirect to={routePath({ name: 'sign-in', next: safeNext(here()) })} />
  const unavailable = (feature: string, on: boolean) => (
    <Unavailable feature={feature} reason={on ? 'release' : 'mode'} mode={config.mode} />
  )

  const messenger = (
    chatId: string | undefined,
    main?: { title: string; screen: (context: MessengerContext) => JSX.Element },
  ) => (
    <Messenger
      main={main?.screen}
      title={main?.title}
      services={services}
      me={user!}
      features={features}
      uploadChunkSize={config.files.chunkSize}
      chatId={chatId}
      firstData={firstData}
      onSignedOut={signedOut}
      aside={contexts.escalations}
    />
  )
  const contexts = contextScreens({ api: services.chat, config, me: user, messenger })

  const screens: { [Name in Route['name']]: (route: Extract<Route, { name: Name }>) => JSX.Element } = {
    'sign-in': ({ next }) =>
      user ? (
        <Redirect to={next} />
      ) : (
        <SignInPage auth={services.auth} deviceGuid={services.client.deviceGuid} next={next} onSignedIn={signedIn} />
      ),
    messenger: ({ chatId }) =>
      needsUser(() => (features.messenger ? messenger(chatId) : unavailable('The messenger', false))),
    account: () =>
      needsUser(() => <AccountPage me={user!} auth={services.auth} chat={services.chat} onSignedOut={signedOut} />),
    guest: ({ code }) => <GuestPage key={code} code={code} services={services} user={user} />,
    support: () => (features.support ? needsUser(contexts.support) : unavailable('Support chat', false)),
    calls: () =>
      features.calls
        ? needsUser(() =>
            messenger(undefined, {
              title: 'Calls',
              screen: ({ bus, call, canCall }) => (
                <CallHistory api={services.calls} me={user!.crmId} bus={bus} onCall={call} canCall={canCall} />
              ),
            }),
          )
        : unavailable('Calls', false),
    feedback: (route) =>
      features.feedback ? needsUser(() => contexts.feedback(route)) : unavailable('Feedback', false),
    files: ({ chatId }) =>
      features.fileBrowser
        ? needsUser(() => <FileBrowser api={services.chat} chatId={chatId} me={user!} />)
        : unavailable('The file browser', false),
    discuss: (route) =>
      features.allChats ? needsUser(() => contexts.discussion(route)) : unavailable('Discussions', false),
    'not-found': ({ path }) => (
      <MessageScreen title="Page not found">
        <p>
          There is no page at <code>{path}</code>.
        </p>
      </MessageScreen>
    ),
  }
  useTitle(SCREEN_TITLES[route.name])
  const screen = screens[route.name] as (route: Route) => JSX.Element
  return screen(route)
}
