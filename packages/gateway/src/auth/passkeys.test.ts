import assert from 'node:assert/strict'
import { errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { signedInUser, startGateway } from '../../test/support.ts'
import { ContactKind } from '../users/users.repository.ts'

const ORIGIN = 'https://atrium.example'

async function started(t: Parameters<Parameters<typeof forEachDialect>[1]>[0], dialect: 'sqlite' | 'postgres') {
  const gateway = await startGateway(t, dialect, { settings: { PublicOrigin: ORIGIN } })
  async function call(method: string, path: string, body?: object, headers: Record<string, string> = {}) {
    const sent = Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'content-type'))
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: body ? { ...sent, 'content-type': 'application/json' } : sent,
      body: body ? JSON.stringify(body) : undefined,
    })
    return { status: response.status, body: await json(response) }
  }
  return { ...gateway, call }
}

/** A stored credential of `crmId`, as a registration would leave it. */
async function storedCredential(
  gateway: Awaited<ReturnType<typeof started>>,
  crmId: number,
  credentialId: string,
  name = 'key',
) {
  const row = await gateway.store.passkeys.add({
    crm_id: crmId,
    credential_id: credentialId,
    public_key: 'pQECAyYgASFYIA',
    counter: 0,
    transports: 'usb',
    kind: 'security_key',
    device_type: 'singleDevice',
    backed_up: 0,
    name,
  })
  assert.ok(row)
  return row
}

forEachDialect(
  'sign-in options tell nothing about who has keys, and list the keys of a named user',
  async (t, dialect) => {
    const gateway = await started(t, dialect)
    const alice = await signedInUser(gateway)
    await gateway.store.users.addContact(alice.crmId, ContactKind.Email, 'alice@example.com')
    await storedCredential(gateway, alice.crmId, 'YWxpY2Uta2V5LTE')
    const noKeys = await signedInUser(gateway)
    await gateway.store.users.addContact(noKeys.crmId, ContactKind.Email, 'nokeys@example.com')

    const options = async (body: object) => {
      const answer = await gateway.call('POST', '/auth/v1/passkeys/authenticate/options', body)
      assert.equal(answer.status, 200, JSON.stringify(answer.body))
      return answer.body.result.options as { rpId: string; allowCredentials?: { id: string }[]; challenge: string }
    }
    const discoverable = await options({})
    assert.equal(discoverable.rpId, 'atrium.example', 'the relying party is the public origin’s host')
    assert.deepEqual(discoverable.allowCredentials ?? [], [])

    assert.deepEqual(
      (await options({ email: 'Alice@Example.com' })).allowCredentials?.map((entry) => entry.id),
      ['YWxpY2Uta2V5LTE'],
    )
    // Nobody and a user without keys get one stable decoy each, shaped like a real key.
    const stranger = await options({ email: 'nobody@example.com' })
    const again = await options({ email: 'nobody@example.com' })
    const keyless = await options({ email: 'nokeys@example.com' })
    assert.equal(stranger.allowCredentials?.length, 1)
    assert.deepEqual(stranger.allowCredentials, again.allowCredentials)
    assert.equal(keyless.allowCredentials?.length, 1)
    assert.notDeepEqual(keyless.allowCredentials, stranger.allowCredentials)
    assert.notEqual(stranger.challenge, again.challenge, 'every ceremony has its own challenge')

    const bad = await gateway.call('POST', '/auth/v1/passkeys/authenticate/options', { email: 'not an email' })
    assert.equal(bad.status, 400)
    assert.equal(bad.body.error.code, errorCodes.InvalidRequest.code)
  },
)

forEachDialect(
  'keys are managed from a session, and nobody renames or removes another user’s key',
  async (t, dialect) => {
    const gateway = await started(t, dialect)
    const alice = await signedInUser(gateway)
    const bob = await signedInUser(gateway)
    const key = await storedCredential(gateway, alice.crmId, 'YWxpY2Uta2V5LTI', 'YubiKey')

    const anonymous = await gateway.call('POST', '/auth/v1/passkeys/register/options', { kind: 'passkey' })
    assert.equal(anonymous.status, 401)
    const options = await gateway.call('POST', '/auth/v1/passkeys/register/options', { kind: 'passkey' }, alice.headers)
    assert.equal(options.status, 200)
    const created = options.body.result.options
    assert.equal(created.rp.id, 'atrium.example')
    assert.equal(created.authenticatorSelection.residentKey, 'required')
    assert.equal(created.authenticatorSelection.userVerification, 'required')
    assert.deepEqual(
      created.excludeCredentials.map((entry: { id: string }) => entry.id),
      ['YWxpY2Uta2V5LTI'],
      'an authenticator that has a key of the user is not registered again',
    )

    // Bob answering Alice's registration challenge gets nothing, not even her challenge's use.
    const stolen = await gateway.call(
      'POST',
      '/auth/v1/passkeys/register/verify',
      {
        challengeId: options.body.result.challengeId,
        name: 'mine',
        response: { id: 'x', rawId: 'x', type: 'public-key', response: {}, clientExtensionResults: {} },
      },
      bob.headers,
    )
    assert.equal(stolen.status, 401)
    assert.equal(stolen.body.error.code, errorCodes.ChallengeExpired.code)

    for (const [method, body] of [
      ['PATCH', { name: 'stolen' }],
      ['DELETE', undefined],
    ] as const) {
      const foreign = await gateway.call(method, `/auth/v1/passkeys/${key.id}`, body, bob.headers)
      assert.equal(foreign.status, 404, method)
    }
    const listed = await gateway.call('GET', '/auth/v1/passkeys', undefined, alice.headers)
    assert.deepEqual(
      listed.body.result.credentials.map((entry: { name: string; kind: string }) => [entry.name, entry.kind]),
      [['YubiKey', 'security_key']],
    )
    const renamed = await gateway.call('PATCH', `/auth/v1/passkeys/${key.id}`, { name: 'Blue key' }, alice.headers)
    assert.equal(renamed.body.result.credential.name, 'Blue key')
    const removed = await gateway.call('DELETE', `/auth/v1/passkeys/${key.id}`, undefined, alice.headers)
    assert.deepEqual(removed.body.result, { removed: true })
    assert.deepEqual(
      (await gateway.call('GET', '/auth/v1/passkeys', undefined, alice.headers)).body.result.credentials,
      [],
    )
  },
)

forEachDialect('an assertion for no live challenge or no known key is refused and audited', async (t, dialect) => {
  const gateway = await started(t, dialect)
  const response = { id: 'bm8ta2V5', rawId: 'bm8ta2V5', type: 'public-key', response: {}, clientExtensionResults: {} }
  const unknownChallenge = await gateway.call('POST', '/auth/v1/passkeys/authenticate/verify', {
    challengeId: '123456',
    response,
  })
  assert.equal(unknownChallenge.status, 401)
  assert.equal(unknownChallenge.body.error.code, errorCodes.InvalidCredentials.code)
  const { challengeId } = (await gateway.call('POST', '/auth/v1/passkeys/authenticate/options', {})).body.result
  const unknownKey = await gateway.call('POST', '/auth/v1/passkeys/authenticate/verify', { challengeId, response })
  assert.equal(unknownKey.status, 401)
  const audit = await gateway.store.db
    .selectFrom('login_audit')
    .select(['method', 'success', 'reason'])
    .orderBy('id')
    .execute()
  assert.deepEqual(
    audit.map((row) => [row.method, row.success, row.reason]),
    [
      ['passkey', 0, 'expired_or_used'],
      ['passkey', 0, 'unknown_credential'],
    ],
  )
})
