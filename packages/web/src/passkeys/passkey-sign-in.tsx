import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser'
import { useEffect, useState } from 'preact/hooks'
import type { SignInMethodProps } from '../sign-in/other-methods.ts'
import { ceremonyFailure, loadWebAuthn, wasCancelled, webAuthnAvailable } from './webauthn.ts'

/**
 * Sign-in with a passkey (any passkey of this site, chosen in the browser's dialog, or offered in
 * the email field's autofill where the browser supports it) or with a security key after naming
 * the email address it was registered under.
 */
export function PasskeySignIn({ auth, info, returnTo, onSignedIn }: SignInMethodProps) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')
  const [withEmail, setWithEmail] = useState(false)
  const [email, setEmail] = useState('')

  async function ceremony(address: string | undefined, autofill: boolean): Promise<void> {
    const { startAuthentication } = await loadWebAuthn()
    const { challengeId, options } = await auth.passkeyOptions<PublicKeyCredentialRequestOptionsJSON>(address)
    const response: AuthenticationResponseJSON = await startAuthentication({
      optionsJSON: options,
      useBrowserAutofill: autofill,
    })
    onSignedIn(await auth.verifyPasskey(challengeId, response, returnTo, info))
  }

  // Passkeys offered in the email field's autofill: a waiting request the browser answers when the
  // person picks one there. A button press replaces it (the library aborts the waiting one).
  useEffect(() => {
    let live = true
    if (!webAuthnAvailable()) return
    loadWebAuthn()
      .then(async ({ browserSupportsWebAuthnAutofill }) => {
        if (live && (await browserSupportsWebAuthnAutofill())) await ceremony(undefined, true)
      })
      .catch((failure) => {
        if (live && !wasCancelled(failure)) setError(ceremonyFailure(failure))
      })
    return () => {
      live = false
    }
  }, [])

  async function start(address: string | undefined) {
    setBusy(true)
    setError('')
    try {
      await ceremony(address, false)
    } catch (failure) {
      setError(ceremonyFailure(failure))
    } finally {
      setBusy(false)
    }
  }

  if (!webAuthnAvailable()) return null
  return (
    <div class="passkey-sign-in">
      <button type="button" class="secondary" disabled={busy} onClick={() => start(undefined)}>
        Sign in with a passkey
      </button>
      {withEmail ? (
        <form
          class="sign-in-form"
          onSubmit={(event) => {
            event.preventDefault()
            start(email.trim())
          }}
        >
          <label for="security-key-email">Email address of your account</label>
          <input
            id="security-key-email"
            type="email"
            autoComplete="email"
            required
            value={email}
            onInput={(event) => setEmail(event.currentTarget.value)}
          />
          <button type="submit" class="secondary" disabled={busy}>
            Use my security key
          </button>
        </form>
      ) : (
        <button type="button" class="link-button" onClick={() => setWithEmail(true)}>
          Use a security key
        </button>
      )}
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
    </div>
  )
}
