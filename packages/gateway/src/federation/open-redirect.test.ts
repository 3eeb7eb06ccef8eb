import assert from 'node:assert/strict'
import { errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { federatedGateway, GATEWAY_ORIGIN, RETURN_URI } from '../../test/federated-flow.ts'
import { signInAtProvider, startOidcProvider } from '../../test/oauth-peers.ts'
import { ATTACKS, expectedLanding, LOOKALIKES, staysOnSite } from '../../test/return-address-payloads.ts'

const CLIENT = { clientId: 'redirect-test', clientSecret: 'redirect-test-client-secret' }
const PAYLOADS = [...ATTACKS, ...LOOKALIKES]

forEachDialect(
  'federated start and passkey verify refuse or keep on this origin every return address',
  async (t, dialect) => {
    assert.ok(PAYLOADS.length >= 40)
    const peer = await startOidcProvider(t, { ...CLIENT, redirectUri: RETURN_URI, accounts: { dave: {} } })
    const gateway = await federatedGateway(t, dialect, {
      Oidc: { Issuer: peer.issuer, ClientId: CLIENT.clientId, ClientSecret: CLIENT.clientSecret },
    })
    const flows = async () => (await gateway.store.db.selectFrom('federated_flows').select('id').execute()).length
    let kept = 0
    for (const payload of PAYLOADS) {
      const label = JSON.stringify(payload)
      const expectedSafe = staysOnSite(payload, GATEWAY_ORIGIN)
      const before = await flows()
      const flow = await gateway.start('oidc', payload)
      if (!expectedSafe) {
        assert.equal(flow.status, 400, label)
        assert.equal(flow.body.error.code, errorCodes.InvalidReturnAddress.code, label)
        assert.equal(await flows(), before, `no flow starts for ${label}`)
      } else {
        // The whole round trip: the browser ends on this origin, at the path the test resolved itself.
        assert.equal(flow.status, 302, label)
        const done = await gateway.finish(await signInAtProvider(String(flow.location), 'dave'), String(flow.cookie))
        assert.equal(done.status, 302, label)
        const landed = new URL(done.location)
        assert.equal(landed.origin, GATEWAY_ORIGIN, label)
        const expected = expectedLanding(payload, GATEWAY_ORIGIN)
        assert.equal(decodeURIComponent(landed.pathname), expected.path, label)
        assert.equal(landed.search + landed.hash, expected.rest, label)
        kept++
      }

      // The passkey sign-in checks returnTo before anything else: refused, or accepted and then
      // refused for the made-up credential (401), never sent anywhere.
      const response = await fetch(`${gateway.url}/auth/v1/passkeys/authenticate/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          challengeId: '1',
          response: { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: {}, clientExtensionResults: {} },
          returnTo: payload,
        }),
      })
      const body = await json(response)
      if (expectedSafe) {
        assert.equal(response.status, 401, label)
      } else {
        assert.equal(response.status, 400, label)
        const code = payload.length > 2048 ? errorCodes.InvalidRequest.code : errorCodes.InvalidReturnAddress.code
        assert.equal(body.error.code, code, label)
      }
    }
    assert.equal(kept, LOOKALIKES.length)
  },
)
