import { useEffect, useState } from 'preact/hooks'
import type { AuthApi, SessionEntry } from '../api/auth-api.ts'
import { failureText } from '../api/envelope.ts'
import { turnOffPush } from '../notifications/web-push.ts'

/** Sign-in methods as people call them. */
const METHOD_WORDS: Record<string, string> = {
  email_otp: 'email code',
  magic_link: 'email link',
  phone_otp: 'phone code',
  passkey: 'passkey',
  fido2_key: 'security key',
  user_key: 'key (script or device)',
}

const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

/** A browser's name from its user agent, coarse on purpose: enough to recognise a device. */
export function deviceName(userAgent: string): string {
  const browser = /Edg\//.test(userAgent)
    ? 'Edge'
    : /Firefox\//.test(userAgent)
      ? 'Firefox'
      : /Chrom(e|ium)\//.test(userAgent)
        ? 'Chrome'
        : /Safari\//.test(userAgent)
          ? 'Safari'
          : ''
  const system = /Android/.test(userAgent)
    ? 'Android'
    : /iPhone|iPad/.test(userAgent)
      ? 'iOS'
      : /Mac OS X/.test(userAgent)
        ? 'macOS'
        : /Windows/.test(userAgent)
          ? 'Windows'
          : /Linux/.test(userAgent)
            ? 'Linux'
            : ''
  if (browser && system) return `${browser} on ${system}`
  return browser || system || (userAgent ? userAgent.slice(0, 40) : 'Unknown device')
}

/**
 * The user's signed-in devices: each session with how and when it signed in and was last used,
 * this one marked; any other can be signed out from here, or all of them at once.
 */
export function SessionsPanel({ auth, onSignedOut }: { auth: AuthApi; onSignedOut: () => void }) {
  const [sessions, setSessions] = useState<SessionEntry[]>()
  const [note, setNote] = useState('')
  const [busy, setBusy] = useState(false)

  useEffect(() => {
    auth
      .sessions()
      .then(setSessions)
      .catch((failure) => setNote(failureText(failure)))
  }, [auth])

  async function end(session: SessionEntry) {
    setBusy(true)
    try {
      await auth.endSession(session.id)
      if (session.current) {
        onSignedOut()
        return
      }
      setSessions((known) => known?.filter((other) => other.id !== session.id))
      setNote(`${deviceName(session.userAgent)} is signed out.`)
    } catch (failure) {
      setNote(failureText(failure))
    } finally {
      setBusy(false)
    }
  }

  async function endAll() {
    setBusy(true)
    try {
      await turnOffPush(auth).catch(() => {})
      await auth.logoutAll()
    } catch {
      // Signed out already: the page signs out all the same.
    }
    onSignedOut()
  }

  return (
    <section class="account-section" aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Signed-in devices</h2>
      {sessions === undefined ? (
        <p class="hint">Loading…</p>
      ) : (
        <ul class="session-list">
          {sessions.map((session) => (
            <li key={session.id} class={session.current ? 'current' : undefined}>
              <span class="session-device">
                {deviceName(session.userAgent)}
                {session.current && <strong class="this-device"> · this browser</strong>}
              </span>
              <span class="hint">
                Signed in by {METHOD_WORDS[session.method] ?? session.method} on {timeFormat.format(session.created)}
                {session.ip && ` from ${session.ip}`} · last used {timeFormat.format(session.lastSeen)}
              </span>
              {!session.current && (
                <button
                  type="button"
                  class="link-button"
                  disabled={busy}
                  aria-label={`Sign out ${deviceName(session.userAgent)}, signed in ${timeFormat.format(session.created)}`}
                  onClick={() => end(session)}
                >
                  Sign out
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <button type="button" class="secondary" disabled={busy} onClick={endAll}>
        Sign out everywhere
      </button>
      {note && <p role="status">{note}</p>}
    </section>
  )
}
