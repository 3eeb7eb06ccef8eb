import { useMemo, useState } from 'preact/hooks'
import type { AuthApi, SignedIn } from '../api/auth-api.ts'
import { browserEnvironment, clientInfo } from './client-info.ts'
import { OTHER_SIGN_IN_METHODS } from './other-methods.ts'
import { EMAIL_FLOW, PHONE_FLOW } from './otp-flows.ts'
import { OtpSignIn } from './otp-sign-in.tsx'

interface SignInPageProps {
  auth: AuthApi
  deviceGuid: string
  /** Path inside the client to return to (also where the magic link leads). */
  next: string
  onSignedIn: (signedIn: SignedIn) => void
}

const FLOWS = [EMAIL_FLOW, PHONE_FLOW]

/** The sign-in page served with the client at /chat/sign-in: email or phone code, then further methods. */
export function SignInPage({ auth, deviceGuid, next, onSignedIn }: SignInPageProps) {
  const [flowId, setFlowId] = useState(EMAIL_FLOW.id)
  const info = useMemo(() => clientInfo(browserEnvironment(), deviceGuid), [deviceGuid])
  const flow = FLOWS.find((candidate) => candidate.id === flowId) ?? EMAIL_FLOW

  return (
    <main class="sign-in">
      <h1>Sign in to Atrium</h1>
      <fieldset class="segmented">
        <legend class="visually-hidden">Sign in with</legend>
        {FLOWS.map((candidate) => (
          <button
            key={candidate.id}
            type="button"
            aria-pressed={candidate.id === flow.id}
            onClick={() => setFlowId(candidate.id)}
          >
            {candidate.tab}
          </button>
        ))}
      </fieldset>
      <OtpSignIn key={flow.id} flow={flow} auth={auth} info={info} returnTo={next} onSignedIn={onSignedIn} />
      {OTHER_SIGN_IN_METHODS.length > 0 && (
        <section class="other-methods" aria-label="Other ways to sign in">
          <h2>Other ways to sign in</h2>
          {OTHER_SIGN_IN_METHODS.map((Method, index) => (
            <Method key={index} auth={auth} info={info} returnTo={next} onSignedIn={onSignedIn} />
          ))}
        </section>
      )}
    </main>
  )
}
