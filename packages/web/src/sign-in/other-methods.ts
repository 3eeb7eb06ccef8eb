import type { FunctionComponent } from 'preact'
import type { AuthApi, ClientInfo, SignedIn } from '../api/auth-api.ts'
import { PasskeySignIn } from '../passkeys/passkey-sign-in.tsx'
import { ProviderPicker } from './provider-picker.tsx'

/** What a further sign-in method gets from the sign-in page. */
export interface SignInMethodProps {
  auth: AuthApi
  info: ClientInfo
  returnTo: string
  onSignedIn: (signedIn: SignedIn) => void
}

/**
 * The sign-in page's slot for methods beyond email and phone codes: the provider picker (Form0,
 * fed by /auth/v1/federated/providers) and passkeys register their components here, and the page
 * shows them under "Other ways to sign in". The section is left out while the list is empty.
 */
export const OTHER_SIGN_IN_METHODS: FunctionComponent<SignInMethodProps>[] = [ProviderPicker, PasskeySignIn]
