import assert from 'node:assert/strict'
import { errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { federatedGateway, RETURN_URI } from '../../test/federated-flow.ts'
import { signInAtProvider, startOidcProvider } from '../../test/oauth-peers.ts'

const CLIENT = { clientId: 'atrium-test', clientSecret: 'a-client-secret-of-the-test-provider' }
// Bob's provider gives no verified email: his account at the provider is his only way in.
const ACCOUNTS = { alice: { email: 'alice@example.com', emailVerified: true, name: 'Alice' }, bob: { name: 'Bob' } }

async function started(t: Parameters<Parameters<typeof forEachDialect>[1]>[0], dialect: 'sqlite' | 'postgres') {
  const peer = await startOidcProvider(t, { ...CLIENT, redirectUri: RETURN_URI, accounts: ACCOUNTS })
  const gateway = await federatedGateway(t, dialect, {
    Oidc: { Issuer: peer.issuer, ClientId: CLIENT.clientId, ClientSecret: CLIENT.clientSecret, Name: 'Test OP' },
  })
  /** Signs `login` in through the provider; the session cookie of the new session. */
  async function signIn(login: string): Promise<string> {
    const start = await gateway.start('oidc', '/chat/')
    assert.ok(start.location)
    const done = await gateway.finish(await signInAtProvider(start.location.href, login), start.cookie)
    assert.equal(done.status, 302, JSON.stringify(done.body))
    return done.session
  }
  async function call(method: string, path: string, session: string) {
    const { csrf } = (await json(await fetch(`${gateway.url}/auth/v1/session`, { headers: { cookie: session } })))
      .result
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: { cookie: session, 'x-csrf-token': csrf },
    })
    return { status: response.status, body: await json(response) }
  }
  return { ...gateway, signIn, call }
}

forEachDialect(
  'a person sees their linked accounts and unlinks one, but never their only way in',
  async (t, dialect) => {
    const gateway = await started(t, dialect)
    const alice = await gateway.signIn('alice')
    const bob = await gateway.signIn('bob')

    const listed = await gateway.call('GET', '/auth/v1/federated/identities', alice)
    assert.equal(listed.status, 200)
    const [identity] = listed.body.result.identities
    assert.equal(listed.body.result.identities.length, 1)
    assert.deepEqual([identity.provider, identity.name, identity.email], ['oidc', 'Test OP', 'alice@example.com'])

    // Bob cannot unlink Alice's account; Bob cannot unlink his own only way in.
    assert.equal((await gateway.call('DELETE', `/auth/v1/federated/identities/${identity.id}`, bob)).status, 404)
    const [bobs] = (await gateway.call('GET', '/auth/v1/federated/identities', bob)).body.result.identities
    const only = await gateway.call('DELETE', `/auth/v1/federated/identities/${bobs.id}`, bob)
    assert.equal(only.status, 409)
    assert.equal(only.body.error.code, errorCodes.Conflict.code)

    // Alice has her verified email besides: unlinking leaves her able to sign in by code.
    const aliceId = (await gateway.store.users.findContact(1, 'alice@example.com'))!.crm_id
    const before = (await gateway.store.users.get(aliceId))!.timetick_update
    const removed = await gateway.call('DELETE', `/auth/v1/federated/identities/${identity.id}`, alice)
    assert.deepEqual(removed.body.result, { removed: true })
    // Her profile changed for the modules the gateway pushes people to (docs/crm.md).
    assert.ok((await gateway.store.users.get(aliceId))!.timetick_update > before)
    assert.deepEqual((await gateway.call('GET', '/auth/v1/federated/identities', alice)).body.result.identities, [])
  },
)

forEachDialect(
  'a browser whose sign-in failed gets a page that leads back to sign-in; a script the envelope',
  async (t, dialect) => {
    const gateway = await started(t, dialect)
    const back = `${gateway.url}/auth/v1/federated/return?state=forged&code=x`
    const page = await fetch(back, { headers: { accept: 'text/html,application/xhtml+xml' } })
    assert.equal(page.status, 401)
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
    assert.equal(page.headers.get('cache-control'), 'no-store')
    const html = await page.text()
    assert.match(html, /This sign-in was not started in this browser; start it again\./)
    assert.match(html, /<a href="\/">Back to sign-in<\/a>/)
    const script = await fetch(back)
    assert.equal(script.status, 401)
    assert.equal((await json(script)).error.code, errorCodes.InvalidCredentials.code)
  },
)
