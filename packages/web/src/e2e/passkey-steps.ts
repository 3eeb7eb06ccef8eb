import type { BrowserContext, CDPSession, Page } from 'playwright-core'

/* Steps of the passkey browser tests: Chromium's virtual authenticator and the account pages. */

export type AuthenticatorOptions = {
  transport: 'internal' | 'usb'
  hasResidentKey: boolean
  backupEligible?: boolean
}

/** Chromium's WebAuthn virtual authenticator in one page's browser context (over CDP). */
export async function virtualAuthenticator(context: BrowserContext, page: Page, options: AuthenticatorOptions) {
  const cdp: CDPSession = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: options.transport,
      hasResidentKey: options.hasResidentKey,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
      defaultBackupEligibility: options.backupEligible ?? false,
      defaultBackupState: options.backupEligible ?? false,
    },
  })
  return {
    cdp,
    authenticatorId,
    credentials: async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials,
  }
}

/** The account page, reached from the profile. */
export async function openAccount(page: Page) {
  await page.getByText('Profile', { exact: true }).click()
  await page.getByRole('link', { name: 'Account and security' }).click()
  await page.getByRole('heading', { name: 'Account and security' }).waitFor()
}

/** Signs out with the profile's button, from the messenger. */
export async function signOut(page: Page) {
  await page.goto(new URL('/chat/', page.url()).href)
  await page.getByText('Profile', { exact: true }).click()
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.waitForURL(/\/chat\/sign-in$/)
}

/** A browser without passkey autofill (conditional mediation), so only the sign-in button asks for a passkey. */
export async function withoutAutofill(context: BrowserContext) {
  await context.addInitScript('delete PublicKeyCredential.isConditionalMediationAvailable')
}
