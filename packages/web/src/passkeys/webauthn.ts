import { failureText, RequestError } from '../api/envelope.ts'

/**
 * @simplewebauthn/browser, loaded when a passkey is first used, so the messenger's first load does
 * not carry it.
 */
export const loadWebAuthn = () => import('@simplewebauthn/browser')

/** The browser can use passkeys and security keys at all. */
export function webAuthnAvailable(): boolean {
  return typeof window !== 'undefined' && typeof window.PublicKeyCredential === 'function'
}

/** True when a ceremony ended because the person cancelled it, it timed out, or another one replaced it. */
export function wasCancelled(error: unknown): boolean {
  const name = (error as { name?: string; cause?: { name?: string } })?.name
  const cause = (error as { cause?: { name?: string } })?.cause?.name
  const code = (error as { code?: string })?.code
  return (
    name === 'AbortError' ||
    name === 'NotAllowedError' ||
    cause === 'NotAllowedError' ||
    cause === 'AbortError' ||
    code === 'ERROR_CEREMONY_ABORTED'
  )
}

/** A failed passkey ceremony in words for the person: the server's refusal, or what the browser said. */
export function ceremonyFailure(error: unknown): string {
  if (error instanceof RequestError) {
    return failureText(error, {
      InvalidCredentials:
        'This key could not sign you in: it is not registered here, or it was removed. Use another way to sign in.',
    })
  }
  if (wasCancelled(error)) return 'The key was not used: the request was cancelled or timed out. Try again.'
  const code = (error as { code?: string })?.code
  if (code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED') return 'This key is registered already.'
  if (code === 'ERROR_INVALID_DOMAIN' || code === 'ERROR_INVALID_RP_ID') {
    return 'Passkeys do not work on this address. Open the site by its domain name.'
  }
  return 'The key could not be used. Try again, or use another way to sign in.'
}
