import assert from 'node:assert/strict'
import { test } from 'node:test'
import { checkAccessibility } from './accessibility.ts'
import { openAccount, signOut, virtualAuthenticator, withoutAutofill } from './passkey-steps.ts'
import { launchBrowser, openPage, type System, signInByEmail, startSystem } from './system.ts'

/** The login audit rows of passkey and security-key sign-ins, oldest first. */
async function keyAudit(system: System) {
  return system.gateway.store.db
    .selectFrom('login_audit')
    .select(['method', 'success', 'reason', 'crm_id'])
    .where('method', 'in', ['passkey', 'fido2_key'])
    .orderBy('id')
    .execute()
}

test('passkeys and security keys: registered, named, used to sign in, and refused when cloned or removed', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  // Passkeys need a domain name as the relying party: the system's public origin is http://localhost:<port>.
  const system = await startSystem(t, 'sqlite', {}, undefined, {}, 'localhost')
  const alice = await openPage(browser)
  await withoutAutofill(alice.context)
  const laptop = await virtualAuthenticator(alice.context, alice.page, {
    transport: 'internal',
    hasResidentKey: true,
    backupEligible: true,
  })
  await alice.page.goto(`${system.url}/chat/sign-in`)
  const aliceId = await signInByEmail(alice.page, system, 'alice@example.com')

  // A passkey is made on the account page, listed as synced, and renamed.
  await openAccount(alice.page)
  await alice.page.getByText('None yet. Add one to sign in without a code.').waitFor()
  await alice.page.getByRole('button', { name: 'Add a passkey' }).click()
  await alice.page.getByRole('status').filter({ hasText: 'Passkey 1 added. You can sign in with it now.' }).waitFor()
  assert.equal((await laptop.credentials()).length, 1, 'the authenticator holds the new credential')
  const row = alice.page.locator('.credential-list li', { hasText: 'Passkey 1' })
  assert.match((await row.textContent()) ?? '', /Passkey · synced · not used yet/)
  await alice.page.getByRole('button', { name: 'Rename Passkey 1' }).click()
  await alice.page.getByLabel('New name for Passkey 1').fill('Work laptop')
  await alice.page.getByRole('button', { name: 'Save', exact: true }).click()
  await alice.page.locator('.credential-list li', { hasText: 'Work laptop' }).waitFor()
  await checkAccessibility(alice.page, 'passkeys-account')

  // Signed out, the passkey signs in without an email address; the verify call is kept for a replay.
  await signOut(alice.page)
  await checkAccessibility(alice.page, 'passkeys-sign-in')
  const verifyBody = alice.page.waitForRequest(/\/auth\/v1\/passkeys\/authenticate\/verify$/)
  await alice.page.getByRole('button', { name: 'Sign in with a passkey' }).click()
  await alice.page.getByTestId('my-crm-id').filter({ hasText: aliceId }).waitFor({ state: 'attached' })
  const signCount = (await laptop.credentials())[0]?.signCount ?? 0
  assert.ok(signCount >= 1, 'the authenticator counted the assertion')

  // The same assertion again (a replay) signs nobody in.
  const replay = await fetch(`${system.url}/auth/v1/passkeys/authenticate/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: system.url },
    body: (await verifyBody).postData() ?? '',
  })
  assert.equal(replay.status, 401)
  assert.deepEqual(replay.headers.getSetCookie(), [])

  // Where the browser offers passkeys in the email field's autofill, the sign-in page asks for one
  // as it opens; Chromium's virtual authenticator answers such a request at once, as if the person
  // had picked the passkey in the list.
  const bob = await openPage(browser)
  await virtualAuthenticator(bob.context, bob.page, { transport: 'internal', hasResidentKey: true })
  await bob.page.goto(`${system.url}/chat/sign-in`)
  const bobId = await signInByEmail(bob.page, system, 'bob@example.com')
  await openAccount(bob.page)
  await bob.page.getByRole('button', { name: 'Add a passkey' }).click()
  await bob.page.getByRole('status').filter({ hasText: 'Passkey 1 added.' }).waitFor()
  await signOut(bob.page)
  await bob.page.getByTestId('my-crm-id').filter({ hasText: bobId }).waitFor({ state: 'attached' })

  // A clone of Alice's credential in another browser: with a lower counter, then with another
  // backup eligibility. Its autofill request is refused and said so.
  const [credential] = await laptop.credentials()
  assert.ok(credential)
  for (const clone of [
    { signCount: 0, backupEligibility: true },
    { signCount: signCount + 100, backupEligibility: false },
  ]) {
    const thief = await openPage(browser)
    const stolen = await virtualAuthenticator(thief.context, thief.page, {
      transport: 'internal',
      hasResidentKey: true,
    })
    await stolen.cdp.send('WebAuthn.addCredential', {
      authenticatorId: stolen.authenticatorId,
      credential: { ...credential, ...clone, backupState: clone.backupEligibility },
    })
    await thief.page.goto(`${system.url}/chat/sign-in`)
    await thief.page.getByRole('alert').filter({ hasText: 'This key could not sign you in' }).waitFor()
    assert.equal(await thief.page.getByTestId('my-crm-id').count(), 0, 'the clone signed nobody in')
    await thief.context.close()
  }

  // A security key (not discoverable, USB) signs in after the email address is given.
  const carol = await openPage(browser)
  await virtualAuthenticator(carol.context, carol.page, { transport: 'usb', hasResidentKey: false })
  await carol.page.goto(`${system.url}/chat/sign-in`)
  const carolId = await signInByEmail(carol.page, system, 'carol@example.com')
  await openAccount(carol.page)
  await carol.page.getByRole('button', { name: 'Add a security key' }).click()
  await carol.page.getByRole('status').filter({ hasText: 'Security key 1 added.' }).waitFor()
  await signOut(carol.page)
  await carol.page.getByRole('button', { name: 'Use a security key' }).click()
  await carol.page.getByLabel('Email address of your account').fill('carol@example.com')
  await carol.page.getByRole('button', { name: 'Use my security key' }).click()
  await carol.page.getByTestId('my-crm-id').filter({ hasText: carolId }).waitFor({ state: 'attached' })

  // A removed passkey no longer signs in.
  await openAccount(alice.page)
  await alice.page.getByRole('button', { name: 'Remove Work laptop' }).click()
  await alice.page.getByRole('status').filter({ hasText: 'Work laptop removed.' }).waitFor()
  await signOut(alice.page)
  await alice.page.getByRole('button', { name: 'Sign in with a passkey' }).click()
  await alice.page.getByRole('alert').filter({ hasText: 'This key could not sign you in' }).waitFor()

  assert.deepEqual(
    (await keyAudit(system)).map((entry) => [entry.method, entry.success, entry.reason, String(entry.crm_id)]),
    [
      ['passkey', 1, '', aliceId],
      ['passkey', 0, 'expired_or_used', aliceId],
      ['passkey', 1, '', bobId],
      ['passkey', 0, 'counter_not_increased', aliceId],
      ['passkey', 0, 'backup_eligibility_changed', aliceId],
      ['fido2_key', 1, '', carolId],
      ['passkey', 0, 'unknown_credential', '0'],
    ],
  )
})
