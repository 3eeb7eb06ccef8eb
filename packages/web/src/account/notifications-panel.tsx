import { useEffect, useState } from 'preact/hooks'
import type { AuthApi } from '../api/auth-api.ts'
import { failureText, isFailure } from '../api/envelope.ts'
import { PushSetupError, type PushState, readPushState, turnOffPush, turnOnPush } from '../notifications/web-push.ts'

const STATE_WORDS: Record<PushState, string> = {
  unsupported: 'This browser cannot show notifications from websites.',
  blocked:
    'Notifications are blocked for this site. Allow them in the browser’s site settings (the icon left of the address), then come back here.',
  off: 'Notifications are off in this browser.',
  on: 'Notifications are on in this browser: new messages show even while this tab is closed.',
}

const SETUP_WORDS: Record<PushSetupError['reason'], string> = {
  unsupported: STATE_WORDS.unsupported,
  blocked: STATE_WORDS.blocked,
  dismissed: 'Notifications stay off: the browser did not get your permission.',
  subscribe: 'The browser could not reach its notification service. Check your connection and try again.',
}

/**
 * "Notifications" on the account page: the state in this browser and one explicit control to turn
 * them on or off. The browser's permission prompt only ever follows a click on "Turn on
 * notifications" (docs/web-client.md). Nothing is offered where the server has Web Push off.
 */
export function NotificationsPanel({ auth }: { auth: AuthApi }) {
  const [publicKey, setPublicKey] = useState<string | undefined>()
  const [state, setState] = useState<PushState | undefined>()
  const [note, setNote] = useState('')
  const [busy, setBusy] = useState(false)
  const [offered, setOffered] = useState(true)

  useEffect(() => {
    auth
      .pushPublicKey()
      .then(setPublicKey)
      .catch((failure) => {
        if (isFailure(failure, 'PushDisabled')) setOffered(false)
        else setNote(failureText(failure))
      })
    readPushState().then(setState, () => setState('unsupported'))
  }, [auth])

  async function change(on: boolean) {
    setBusy(true)
    setNote('')
    try {
      if (on) await turnOnPush(auth, publicKey!)
      else await turnOffPush(auth)
      setNote(on ? 'Notifications are turned on.' : 'Notifications are turned off.')
    } catch (failure) {
      setNote(failure instanceof PushSetupError ? SETUP_WORDS[failure.reason] : failureText(failure))
    } finally {
      setState(await readPushState().catch(() => 'unsupported' as const))
      setBusy(false)
    }
  }

  if (!offered) return null
  return (
    <section class="account-section" aria-labelledby="notifications-heading">
      <h2 id="notifications-heading">Notifications</h2>
      <p class="hint" data-testid="push-state">
        {state === undefined ? 'Checking this browser…' : STATE_WORDS[state]}
      </p>
      {state === 'off' && (
        <button type="button" disabled={busy || !publicKey} onClick={() => change(true)}>
          Turn on notifications
        </button>
      )}
      {state === 'on' && (
        <button type="button" class="secondary" disabled={busy} onClick={() => change(false)}>
          Turn off notifications
        </button>
      )}
      {note && <p role="status">{note}</p>}
    </section>
  )
}
