import assert from 'node:assert/strict'
import { ContactFlags, errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { federatedGateway, RETURN_URI } from '../../test/federated-flow.ts'
import { signInAtProvider, startOidcProvider } from '../../test/oauth-peers.ts'
import { capturedLog } from '../../test/support.ts'
import { ContactKind } from '../users/users.repository.ts'

const CLIENT = { clientId: 'atrium-test', clientSecret: 'a-client-secret-of-the-test-provider' }
const ACCOUNTS = {
  alice: { email: 'Alice@Example.com', emailVerified: true, name: 'Alice' },
  mallory: { email: 'victim@example.com', emailVerified: false, name: 'Mallory' },
  bob: { name: 'Bob' },
}

async function started(t: Parameters<Parameters<typeof forEachDialect>[1]>[0], dialect: 'sqlite' | 'postgres') {
  const peer = await startOidcProvider(t, { ...CLIENT, redirectUri: RETURN_URI, accounts: ACCOUNTS })
  const provider = { Issuer: peer.issuer, ClientId: CLIENT.clientId, ClientSecret: CLIENT.clientSecret }
  const gateway = await federatedGateway(t, dialect, { Oidc: { ...provider, Name: 'Test OP' }, Google: provider })
  return { ...gateway, peer }
}

forEachDialect(
  'a generic OpenID provider signs in with PKCE, state and nonce, and a verified email links',
  async (t, dialect) => {
    const gateway = await started(t, dialect)
    const existing = await gateway.store.users.create()
    await gateway.store.users.addContact(existing.crm_id, ContactKind.Email, 'alice@example.com')

    const catalogue = await json(await fetch(`${gateway.url}/auth/v1/federated/providers`))
    assert.deepEqual(catalogue.result.providers, [
      { id: 'oidc', name: 'Test OP', logo: '', kind: 'oidc' },
      { id: 'google', name: 'Google', logo: '', kind: 'oidc' },
    ])

    const started1 = await gateway.start('oidc', '/chat/?room=1#top')
    assert.equal(started1.status, 302)
    assert.ok(started1.location)
    assert.equal(started1.location.origin, gateway.peer.issuer)
    const query = started1.location.searchParams
    assert.equal(query.get('code_challenge_method'), 'S256')
    assert.match(query.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/)
    assert.match(query.get('nonce') ?? '', /^[A-Za-z0-9_-]{43}$/)
    assert.equal(query.get('redirect_uri'), RETURN_URI)
    assert.match(started1.setCookie, /HttpOnly/)
    assert.match(started1.setCookie, /SameSite=Lax/)
    assert.match(started1.setCookie, /Path=\/auth\/v1\/federated\//)
    assert.equal(started1.cookie.split('=')[1], query.get('state'))

    const back = await signInAtProvider(started1.location.href, 'alice')
    assert.equal(back.origin + back.pathname, RETURN_URI)
    const done = await gateway.finish(back, started1.cookie)
    assert.equal(done.status, 302, JSON.stringify(done.body))
    assert.equal(done.location, 'https://atrium.example/chat/?room=1#top')
    assert.ok(done.session)
    const who = await gateway.whoIs(done.session)
    assert.equal(who.crmId, String(existing.crm_id))
    const contact = await gateway.store.users.findContact(ContactKind.Email, 'alice@example.com')
    assert.ok(contact && (contact.flags & ContactFlags.Verified) !== 0)
    const identity = await gateway.store.federation.identity('oidc', 'alice')
    assert.equal(identity?.crm_id, existing.crm_id)

    // The same account at a second provider (a preset pointed at the same peer) links by the same verified email.
    const google = await gateway.start('google')
    const viaGoogle = await gateway.finish(
      await signInAtProvider(String(google.location), 'alice'),
      String(google.cookie),
    )
    assert.equal(viaGoogle.location, 'https://atrium.example/')
    assert.equal((await gateway.whoIs(viaGoogle.session)).crmId, String(existing.crm_id))
    const audit = await gateway.audit()
    assert.deepEqual(
      audit.map((row) => [row.method, Number(row.success), row.crm_id]),
      [
        ['oauth_oidc', 1, existing.crm_id],
        ['oauth_google', 1, existing.crm_id],
      ],
    )
  },
)

forEachDialect('an unverified email never links to the account that has it', async (t, dialect) => {
  const gateway = await started(t, dialect)
  const victim = await gateway.store.users.create()
  await gateway.store.users.addContact(victim.crm_id, ContactKind.Email, 'victim@example.com')

  const flow = await gateway.start('oidc')
  const done = await gateway.finish(await signInAtProvider(String(flow.location), 'mallory'), String(flow.cookie))
  assert.equal(done.status, 302, JSON.stringify(done.body))
  const who = await gateway.whoIs(done.session)
  assert.notEqual(who.crmId, String(victim.crm_id))
  assert.deepEqual(who.user.contacts, [])
  const contact = await gateway.store.users.findContact(ContactKind.Email, 'victim@example.com')
  assert.equal(contact?.crm_id, victim.crm_id)
  assert.equal((contact?.flags ?? 0) & ContactFlags.Verified, 0)

  // The next sign-in of the same provider account finds the same separate user.
  const again = await gateway.start('oidc')
  const second = await gateway.finish(await signInAtProvider(String(again.location), 'mallory'), String(again.cookie))
  assert.equal((await gateway.whoIs(second.session)).crmId, who.crmId)
})

forEachDialect('tampered state, nonce and PKCE verifier and replayed codes are refused', async (t, dialect) => {
  const gateway = await started(t, dialect)
  const refused = (answer: Awaited<ReturnType<typeof gateway.finish>>) => {
    assert.equal(answer.status, 401, JSON.stringify(answer.body))
    assert.equal(answer.body.error.code, errorCodes.InvalidCredentials.code)
    assert.equal(answer.session, '')
  }
  // No state cookie: the return was not started in this browser (login CSRF with someone else's code).
  const a = await gateway.start('oidc')
  const backA = await signInAtProvider(String(a.location), 'bob')
  refused(await gateway.finish(backA, ''))
  // Another flow's cookie.
  const b = await gateway.start('oidc')
  refused(await gateway.finish(backA, String(b.cookie)))
  // A state in the URL that differs from the cookie's.
  const forged = new URL(backA)
  forged.searchParams.set('state', String(b.cookie).split('=')[1] ?? '')
  refused(await gateway.finish(forged, String(a.cookie)))

  // The real return works once; its replay is refused.
  const c = await gateway.start('oidc')
  const backC = await signInAtProvider(String(c.location), 'bob')
  const ok = await gateway.finish(backC, String(c.cookie))
  assert.equal(ok.status, 302, JSON.stringify(ok.body))
  refused(await gateway.finish(backC, String(c.cookie)))
  // The used code under a fresh flow's state: the provider refuses it (used, and another verifier).
  const d = await gateway.start('oidc')
  const stateD = String(d.cookie).split('=')[1] ?? ''
  const replayed = new URL(backC)
  replayed.searchParams.set('state', stateD)
  refused(await gateway.finish(replayed, String(d.cookie)))

  // A flow whose PKCE verifier or nonce no longer matches what the provider saw.
  const tamper = async (column: 'code_verifier' | 'nonce') => {
    const flow = await gateway.start('oidc')
    const back = await signInAtProvider(String(flow.location), 'bob')
    await gateway.store.db
      .updateTable('federated_flows')
      .set({ [column]: 'x'.repeat(43) })
      .where('consumed', '=', 0)
      .execute()
    refused(await gateway.finish(back, String(flow.cookie)))
  }
  await tamper('code_verifier')
  await tamper('nonce')

  const reasons = (await gateway.audit()).filter((row) => Number(row.success) === 0).map((row) => row.reason)
  assert.deepEqual(reasons.slice(0, 4), ['state_mismatch', 'state_mismatch', 'state_mismatch', 'expired_or_used'])
  // The provider refuses the used code and the wrong verifier; openid-client refuses the wrong nonce.
  assert.deepEqual(reasons.slice(4), ['provider_invalid_grant', 'provider_invalid_grant', 'provider_refused'])
})

forEachDialect('an unknown provider, a bad return address and a provider error are refused', async (t, dialect) => {
  const gateway = await started(t, dialect)
  const unknown = await gateway.start('nobody')
  assert.equal(unknown.status, 404)
  const evil = await gateway.start('oidc', '//evil.example/')
  assert.equal(evil.status, 400)
  assert.equal(evil.body.error.code, errorCodes.InvalidReturnAddress.code)
  const flow = await gateway.start('oidc')
  const state = String(flow.cookie).split('=')[1] ?? ''
  const denied = await gateway.finish(`${RETURN_URI}?error=access_denied&state=${state}`, String(flow.cookie))
  assert.equal(denied.status, 401)
  assert.equal((await gateway.audit()).at(-1)?.reason, 'provider_denied')
})

forEachDialect('parallel returns of one provider account make one user and one identity', async (t, dialect) => {
  const gateway = await started(t, dialect)
  for (const login of ['alice', 'bob']) {
    const flows = await Promise.all(Array.from({ length: 4 }, () => gateway.start('oidc')))
    const backs = await Promise.all(flows.map((flow) => signInAtProvider(String(flow.location), login)))
    const done = await Promise.all(backs.map((back, i) => gateway.finish(back, String(flows[i]?.cookie))))
    const users = await Promise.all(done.map((answer) => gateway.whoIs(answer.session)))
    assert.equal(new Set(users.map((user) => user.crmId)).size, 1, login)
    const rows = await gateway.store.db
      .selectFrom('federated_identities')
      .selectAll()
      .where('subject', '=', login)
      .execute()
    assert.equal(rows.length, 1)
    assert.equal(String(rows[0]?.crm_id), users[0]?.crmId)
  }
})

forEachDialect('client secrets, codes and states never reach the log', async (t, dialect) => {
  const peer = await startOidcProvider(t, { ...CLIENT, redirectUri: RETURN_URI, accounts: ACCOUNTS })
  const log = capturedLog()
  const provider = { Issuer: peer.issuer, ClientId: CLIENT.clientId, ClientSecret: CLIENT.clientSecret }
  const gateway = await federatedGateway(t, dialect, { Oidc: provider }, undefined, {
    level: 'info',
    stream: log.stream,
  })
  const flow = await gateway.start('oidc')
  const back = await signInAtProvider(String(flow.location), 'alice')
  const done = await gateway.finish(back, String(flow.cookie))
  assert.equal(done.status, 302)
  assert.equal((await gateway.finish(back, String(flow.cookie))).status, 401)
  const secrets = [CLIENT.clientSecret, back.searchParams.get('code') ?? '', back.searchParams.get('state') ?? '']
  assert.ok(secrets.every((secret) => secret.length > 8))
  assert.ok(log.lines.length > 0)
  for (const secret of secrets) assert.ok(!log.lines.join('').includes(secret), 'a secret was logged')
})
