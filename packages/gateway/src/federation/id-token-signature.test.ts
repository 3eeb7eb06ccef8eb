import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { federatedGateway, RETURN_URI } from '../../test/federated-flow.ts'
import { decodeJws, newSigningKey, signJws } from '../../test/id-tokens.ts'
import { signInAtProvider, startOidcProvider } from '../../test/oauth-peers.ts'
import { checkedPartner } from './partner-input.ts'

const CLIENT = { clientId: 'signature-test', clientSecret: 'signature-test-client-secret' }
const ACCOUNTS = { erin: { email: 'erin@example.com', emailVerified: true, name: 'Erin' } }

async function started(t: TestContext, dialect: 'sqlite' | 'postgres') {
  const peer = await startOidcProvider(t, { ...CLIENT, redirectUri: RETURN_URI, accounts: ACCOUNTS })
  const gateway = await federatedGateway(t, dialect, {
    Oidc: { Name: 'Test OP', Issuer: peer.issuer, ClientId: CLIENT.clientId, ClientSecret: CLIENT.clientSecret },
  })
  /** A flow started at the gateway and signed in as erin at the provider: the cookie and the way back. */
  const atProvider = async () => {
    const flow = await gateway.start('oidc')
    return { cookie: String(flow.cookie), back: await signInAtProvider(String(flow.location), 'erin') }
  }
  /** One sign-in as erin, returned to the gateway as a script would. */
  const signIn = async () => {
    const { cookie, back } = await atProvider()
    return gateway.finish(back, cookie)
  }
  const counts = async () => {
    const count = async (table: 'users' | 'sessions' | 'federated_identities') =>
      Number(
        (
          await gateway.store.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirst()
        )?.n,
      )
    return {
      users: await count('users'),
      sessions: await count('sessions'),
      identities: await count('federated_identities'),
    }
  }
  return { gateway, peer, atProvider, signIn, counts }
}

forEachDialect(
  'an ID token not signed by a published key of the provider with an algorithm it advertises is refused',
  async (t, dialect) => {
    const { gateway, peer, atProvider, signIn, counts } = await started(t, dialect)
    const discovery = await json(await fetch(`${peer.issuer}/.well-known/openid-configuration`))
    const advertised = discovery.id_token_signing_alg_values_supported as string[]
    assert.ok(advertised.includes('RS256'))
    for (const alg of ['none', 'HS256', 'RS384']) assert.ok(!advertised.includes(alg), alg)

    const foreign = newSigningKey()
    type Header = Record<string, unknown>
    type Payload = Record<string, unknown>
    // Each tampering, and why the gateway refuses it (the end of its message).
    const tamperings: [string, (header: Header, payload: Payload) => string, RegExp][] = [
      // The provider's header (RS256, its kid) with the signature part left empty.
      [
        'a stripped signature',
        (header, payload) => `${signJws(header, payload, peer.signingKey).split('.', 2).join('.')}.`,
        /signature is wrong/,
      ],
      [
        'a foreign key under the provider’s kid',
        (header, payload) => signJws(header, payload, foreign.privateKey),
        /signature is wrong/,
      ],
      [
        'a foreign key under its own kid',
        (header, payload) => signJws({ ...header, kid: foreign.kid }, payload, foreign.privateKey),
        /no published key/,
      ],
      ['alg none', ({ kid: _kid, ...header }, payload) => signJws({ ...header, alg: 'none' }, payload), /algorithm/],
      [
        'HS256 keyed with the client secret',
        ({ kid: _kid, ...header }, payload) => signJws({ ...header, alg: 'HS256' }, payload, CLIENT.clientSecret),
        /algorithm/,
      ],
      // A valid signature by the provider's own key, in an algorithm it does not advertise.
      [
        'RS384 by the provider’s own key',
        (header, payload) => signJws({ ...header, alg: 'RS384' }, payload, peer.signingKey),
        /algorithm/,
      ],
    ]
    // Each its own subtest, so that a broken rule shows which tamperings it lets through.
    for (const [label, tamper, why] of tamperings) {
      await t.test(label, async () => {
        const before = await counts()
        let tampered = 0
        peer.tampering.idToken = (idToken) => {
          tampered++
          const { header, payload } = decodeJws(idToken)
          return tamper(header, payload)
        }
        const refused = await signIn()
        assert.equal(tampered, 1, 'the gateway took one tampered token')
        assert.equal(refused.status, 401, JSON.stringify(refused.body))
        assert.equal(refused.body.error.code, errorCodes.InvalidCredentials.code)
        assert.match(refused.body.error.message, why)
        assert.equal(refused.session, '')
        assert.deepEqual(await counts(), before, 'nothing was made')
        const last = (await gateway.audit()).at(-1)
        assert.deepEqual([last?.method, Number(last?.success), last?.reason], ['oauth_oidc', 0, 'id_token_signature'])
      })
    }

    // A browser gets the same refusal as a page, and its flow's state cookie is cleared.
    const before = await counts()
    const { cookie, back } = await atProvider()
    const page = await fetch(`${gateway.url}${back.pathname}${back.search}`, {
      redirect: 'manual',
      headers: { cookie, accept: 'text/html,application/xhtml+xml' },
    })
    assert.equal(page.status, 401)
    assert.match(await page.text(), /Sign-in did not complete.*Test OP’s answer was refused: its algorithm/s)
    const cookies = page.headers.getSetCookie()
    const cookieName = gateway.config.Sessions.CookieName
    assert.ok(!cookies.some((line) => line.startsWith(`${cookieName}=`)))
    assert.ok(cookies.some((line) => line.startsWith(`${cookieName}_oauth=;`) && line.includes('Max-Age=0')))
    assert.deepEqual(await counts(), before)

    // The provider's own token, untampered, signs in.
    peer.tampering.idToken = undefined
    const accepted = await signIn()
    assert.equal(accepted.status, 302, JSON.stringify(accepted.body))
    assert.ok(accepted.session)
    assert.equal((await counts()).identities, before.identities + 1)
  },
)

forEachDialect(
  'every OpenID preset and a partner refuse a stripped signature and accept a signed token',
  async (t, dialect) => {
    const peer = await startOidcProvider(t, { ...CLIENT, redirectUri: RETURN_URI, accounts: ACCOUNTS })
    const provider = { Issuer: peer.issuer, ClientId: CLIENT.clientId, ClientSecret: CLIENT.clientSecret }
    const presets = { Oidc: provider, Google: provider, Microsoft: provider, Apple: provider, GitLab: provider }
    const gateway = await federatedGateway(t, dialect, presets)
    const partner = { slug: 'acme', name: 'Acme', issuer: peer.issuer, ...CLIENT }
    assert.ok(await gateway.store.federation.partners.add(checkedPartner(partner)))
    const ids = ['oidc', 'google', 'microsoft', 'apple', 'gitlab', 'acme']
    const catalogue = await json(await fetch(`${gateway.url}/auth/v1/federated/providers`))
    assert.deepEqual(
      catalogue.result.providers.map((entry: { id: string; kind: string }) => [entry.id, entry.kind]),
      ids.map((id) => [id, 'oidc']),
    )
    for (const id of ids) {
      for (const tampered of [true, false]) {
        peer.tampering.idToken = tampered ? (idToken) => `${idToken.split('.', 2).join('.')}.` : undefined
        const flow = await gateway.start(id)
        const done = await gateway.finish(await signInAtProvider(String(flow.location), 'erin'), String(flow.cookie))
        assert.equal(done.status, tampered ? 401 : 302, `${id}: ${JSON.stringify(done.body)}`)
        assert.equal(done.session === '', tampered, id)
      }
    }
    const audit = await gateway.audit()
    assert.deepEqual(
      audit.map((row) => [row.method, Number(row.success), row.reason]),
      ids.flatMap((id) => {
        const method = id === 'acme' ? 'federation_acme' : `oauth_${id}`
        return [
          [method, 0, 'id_token_signature'],
          [method, 1, ''],
        ]
      }),
    )
  },
)

forEachDialect('the JWKS is kept, and fetched again for a key the provider rotates to', async (t, dialect) => {
  const { gateway, peer, signIn } = await started(t, dialect)
  const first = await signIn()
  assert.equal(first.status, 302, JSON.stringify(first.body))
  const user = (await gateway.whoIs(first.session)).crmId
  const again = await signIn()
  assert.equal(again.status, 302, JSON.stringify(again.body))
  assert.equal(peer.served.jwks, 1, 'the second sign-in used the kept JWKS')

  // The provider publishes a new key and signs with it at once; the gateway still keeps the old set.
  const rotated = newSigningKey()
  peer.tampering.extraKeys.push(rotated.publicJwk)
  peer.tampering.idToken = (idToken) => {
    const { header, payload } = decodeJws(idToken)
    return signJws({ ...header, kid: rotated.kid }, payload, rotated.privateKey)
  }
  // openid-client fetches the JWKS again for an unknown kid once its copy is a minute old, and
  // keeps a copy at most five minutes: a minute later the copy is still kept, the kid unknown to it.
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() + 61_000 })
  const rotatedSignIn = await signIn()
  assert.equal(rotatedSignIn.status, 302, JSON.stringify(rotatedSignIn.body))
  assert.equal((await gateway.whoIs(rotatedSignIn.session)).crmId, user)
  assert.equal(peer.served.jwks, 2)
  assert.deepEqual(
    (await gateway.audit()).map((row) => [Number(row.success), row.reason]),
    [
      [1, ''],
      [1, ''],
      [1, ''],
    ],
  )
})
