import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { AuthApi, ClientInfo, SignedIn } from '../api/auth-api.ts'
import { failureText } from '../api/envelope.ts'
import type { OtpFlow } from './otp-flows.ts'

interface OtpSignInProps {
  flow: OtpFlow
  auth: AuthApi
  /** The audit fields sent with every attempt. */
  info: ClientInfo
  /** Path to come back to, also after the magic link. */
  returnTo: string
  onSignedIn: (signedIn: SignedIn) => void
}

/** Why an attempt failed, in words for the person signing in: a refused address or code is theirs to fix. */
function explain(error: unknown, flow: OtpFlow, codeStep: boolean): string {
  return failureText(error, { InvalidRequest: codeStep ? 'Enter the 6 digits of the code we sent.' : flow.invalid })
}

/** A two-step sign-in: the address or number, then the code that was sent to it. */
export function OtpSignIn({ flow, auth, info, returnTo, onSignedIn }: OtpSignInProps) {
  const [target, setTarget] = useState('')
  const [challengeId, setChallengeId] = useState('')
  const [code, setCode] = useState('')
  // What is under way: a code being sent, or one being checked.
  const [busy, setBusy] = useState<'' | 'sending' | 'verifying'>('')
  const [error, setError] = useState('')
  const input = useRef<HTMLInputElement>(null)

  // Keyboard users land in the field of each step.
  useLayoutEffect(() => input.current?.focus(), [challengeId])

  async function attempt(kind: 'sending' | 'verifying', action: () => Promise<void>) {
    setBusy(kind)
    setError('')
    try {
      await action()
    } catch (failure) {
      setError(explain(failure, flow, challengeId !== ''))
    } finally {
      setBusy('')
    }
  }

  const start = () => {
    // The old code goes now, not when the answer comes: the mail can arrive first, and a code typed
    // meanwhile must stay.
    setCode('')
    return attempt('sending', async () => {
      const challenge = await flow.start(auth, target.trim(), returnTo, info)
      setChallengeId(challenge.challengeId)
    })
  }

  const verify = () =>
    attempt('verifying', async () => {
      onSignedIn(await flow.verify(auth, challengeId, code.trim(), info))
    })

  function submit(event: Event) {
    event.preventDefault()
    if (!busy) challengeId ? verify() : start()
  }

  const fieldId = `sign-in-${flow.id}`
  const alert = error ? (
    <p class="form-error" role="alert">
      {error}
    </p>
  ) : null

  const targetField = {
    ref: input,
    id: fieldId,
    name: flow.id,
    required: true,
    value: target,
    onInput: (event: Event) => setTarget((event.currentTarget as HTMLInputElement).value),
  }

  if (!challengeId) {
    return (
      <form class="sign-in-form" onSubmit={submit}>
        <label for={fieldId}>{flow.label}</label>
        {flow.id === 'email' ? (
          <input type="email" autoComplete="email webauthn" {...targetField} />
        ) : (
          <input type="tel" autoComplete="tel" {...targetField} />
        )}
        <p class="hint">{flow.hint}</p>
        {alert}
        <button type="submit" disabled={busy !== ''}>
          {busy ? 'Sending…' : 'Send code'}
        </button>
      </form>
    )
  }

  return (
    <form class="sign-in-form" onSubmit={submit}>
      <p>{flow.sent(target.trim())}</p>
      <label for={`${fieldId}-code`}>Sign-in code</label>
      <input
        ref={input}
        id={`${fieldId}-code`}
        name="code"
        inputMode="numeric"
        autoComplete="one-time-code"
        pattern="[0-9]{6}"
        maxLength={6}
        required
        value={code}
        onInput={(event) => setCode(event.currentTarget.value)}
      />
      {alert}
      <button type="submit" disabled={busy !== ''}>
        {busy === 'sending' ? 'Sending a new code…' : busy ? 'Signing in…' : 'Sign in'}
      </button>
      <div class="form-actions">
        <button type="button" class="link-button" disabled={busy !== ''} onClick={start}>
          Send a new code
        </button>
        <button type="button" class="link-button" disabled={busy !== ''} onClick={() => setChallengeId('')}>
          Use another {flow.id === 'email' ? 'address' : 'number'}
        </button>
      </div>
    </form>
  )
}
