import assert from 'node:assert/strict'
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto'
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

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest()

/**
 * A software authenticator with one ES256 passkey (user present and verified, not backed up):
 * it answers registration and sign-in ceremonies, writing `origin` into the client data as a
 * browser would for the page that asked.
 */
function softwareAuthenticator(rpId: string) {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const credentialId = randomBytes(16)
  const id = credentialId.toString('base64url')
  let counter = 0
  const clientData = (type: string, challenge: string, origin: string) =>
    Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }))
  const authenticatorData = (flags: number, attested = Buffer.alloc(0)) => {
    const head = Buffer.alloc(37)
    sha256(rpId).copy(head, 0)
    head[32] = flags
    head.writeUInt32BE(++counter, 33)
    return Buffer.concat([head, attested])
  }
  /** The public key as a COSE_Key (EC2, ES256), in CBOR. */
  const coseKey = () => {
    const jwk = publicKey.export({ format: 'jwk' })
    return Buffer.concat([
      Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]),
      Buffer.from(jwk.x!, 'base64url'),
      Buffer.from([0x22, 0x58, 0x20]),
      Buffer.from(jwk.y!, 'base64url'),
    ])
  }
  const credential = (response: Record<string, string>) => ({
    id,
    rawId: id,
    type: 'public-key',
    response,
    clientExtensionResults: {},
  })
  return {
    id,
    /** The answer to registration options: attestation format `none`, as most passkey providers send. */
    create(challenge: string, origin: string) {
      const length = Buffer.alloc(2)
      length.writeUInt16BE(credentialId.length)
      // User present (0x01), user verified (0x04), attested credential data (0x40); an all-zero AAGUID.
      const authData = authenticatorData(0x45, Buffer.concat([Buffer.alloc(16), length, credentialId, coseKey()]))
      const attestationObject = Buffer.concat([
        Buffer.from([0xa3, 0x63]),
        Buffer.from('fmt'),
        Buffer.from([0x64]),
        Buffer.from('none'),
        Buffer.from([0x67]),
        Buffer.from('attStmt'),
        Buffer.from([0xa0, 0x68]),
        Buffer.from('authData'),
        Buffer.from([0x58, authData.length]),
        authData,
      ])
      return credential({
        clientDataJSON: clientData('webauthn.create', challenge, origin).toString('base64url'),
        attestationObject: attestationObject.toString('base64url'),
      })
    },
    /** The answer to sign-in options, signed by the credential's key. */
    get(challenge: string, origin: string) {
      const authData = authenticatorData(0x05)
      const clientDataJSON = clientData('webauthn.get', challenge, origin)
      const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), privateKey)
      return credential({
        authenticatorData: authData.toString('base64url'),
        clientDataJSON: clientDataJSON.toString('base64url'),
        signature: signature.toString('base64url'),
      })
    },
  }
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

forEachDialect(
  'a ceremony answered for another origin is refused: no key is registered and no session is made',
  async (t, dialect) => {
    const gateway = await started(t, dialect)
    const alice = await signedInUser(gateway)
    const authenticator = softwareAuthenticator('atrium.example')
    const register = async (origin: string) => {
      const { challengeId, options } = (
        await gateway.call('POST', '/auth/v1/passkeys/register/options', { kind: 'passkey' }, alice.headers)
      ).body.result
      const response = authenticator.create(options.challenge, origin)
      return gateway.call(
        'POST',
        '/auth/v1/passkeys/register/verify',
        { challengeId, name: 'phone', response },
        alice.headers,
      )
    }
    const signIn = async (origin: string) => {
      const { challengeId, options } = (await gateway.call('POST', '/auth/v1/passkeys/authenticate/options', {})).body
        .result
      const response = authenticator.get(options.challenge, origin)
      return gateway.call('POST', '/auth/v1/passkeys/authenticate/verify', { challengeId, response })
    }
    const sessions = async () => (await gateway.store.db.selectFrom('sessions').select('crm_id').execute()).length

    const foreignRegistration = await register('https://evil.example')
    assert.equal(foreignRegistration.status, 400, JSON.stringify(foreignRegistration.body))
    assert.equal(foreignRegistration.body.error.code, errorCodes.InvalidRequest.code)
    assert.deepEqual((await gateway.store.passkeys.list(alice.crmId)).length, 0)
    const registered = await register(ORIGIN)
    assert.equal(registered.status, 200, JSON.stringify(registered.body))
    assert.deepEqual(
      (await gateway.store.passkeys.list(alice.crmId)).map((key) => key.credential_id),
      [authenticator.id],
    )

    const before = await sessions()
    const foreign = await signIn('https://evil.example')
    assert.equal(foreign.status, 401, JSON.stringify(foreign.body))
    assert.equal(foreign.body.error.code, errorCodes.InvalidCredentials.code)
    assert.equal(await sessions(), before, 'no session for an assertion made on another site')
    // The same key on the gateway's own origin signs in: only the origin made the difference.
    const own = await signIn(ORIGIN)
    assert.equal(own.status, 200, JSON.stringify(own.body))
    assert.equal(own.body.result.user.crmId, String(alice.crmId))
    assert.equal(await sessions(), before + 1)
    const audit = await gateway.store.db
      .selectFrom('login_audit')
      .select(['success', 'reason', 'crm_id'])
      .orderBy('id')
      .execute()
    assert.deepEqual(
      audit.map((row) => [row.success, row.reason, row.crm_id]),
      [
        [0, 'invalid_assertion', alice.crmId],
        [1, '', alice.crmId],
      ],
    )
  },
)
