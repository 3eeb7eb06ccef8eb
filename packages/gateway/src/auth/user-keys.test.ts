import assert from 'node:assert/strict'
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto'
import { errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { signedInUser, startGateway } from '../../test/support.ts'

const ORIGIN = 'https://atrium.example'

/** A key pair made by Node's crypto, and its public key in both accepted spellings. */
function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  const raw = (publicKey.export({ format: 'jwk' }).x as string) ?? ''
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString()
  return { raw, pem, privateKey }
}

/** The test signs the challenge text with the private key (RFC 8032 Ed25519, as Node implements it). */
const signText = (text: string, privateKey: KeyObject) =>
  sign(null, Buffer.from(text, 'utf8'), privateKey).toString('base64url')

async function started(
  t: Parameters<Parameters<typeof forEachDialect>[1]>[0],
  dialect: 'sqlite' | 'postgres',
  now?: () => number,
) {
  const gateway = await startGateway(t, dialect, { settings: { PublicOrigin: ORIGIN }, now })
  async function call(method: string, path: string, body?: object, headers: Record<string, string> = {}) {
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      // signedInUser's headers name a JSON body; without one, no content type is sent.
      headers: body
        ? { ...headers, 'Content-Type': 'application/json' }
        : Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'content-type')),
      body: body ? JSON.stringify(body) : undefined,
    })
    return { status: response.status, body: await json(response), cookies: response.headers.getSetCookie() }
  }
  async function challengeFor(publicKey: string) {
    const answer = await call('POST', '/auth/v1/userkey/challenge', { publicKey })
    assert.equal(answer.status, 200, JSON.stringify(answer.body))
    return answer.body.result.challenge as string
  }
  return { ...gateway, call, challengeFor }
}

forEachDialect('a registered Ed25519 key signs a challenge and gets a session of its user', async (t, dialect) => {
  const gateway = await started(t, dialect)
  const user = await signedInUser(gateway)
  const { raw, pem, privateKey } = keyPair()

  // Registered as PEM, listed as the raw key with a fingerprint.
  const added = await gateway.call(
    'POST',
    '/auth/v1/user-keys',
    { name: 'deploy script', publicKey: pem },
    user.headers,
  )
  assert.equal(added.status, 200, JSON.stringify(added.body))
  assert.equal(added.body.result.userKey.publicKey, raw)
  assert.match(added.body.result.userKey.fingerprint, /^SHA256:[A-Za-z0-9_-]{22}$/)
  const listed = await gateway.call('GET', '/auth/v1/user-keys', undefined, user.headers)
  assert.deepEqual(
    listed.body.result.keys.map((key: { name: string }) => key.name),
    ['deploy script'],
  )

  const challenge = await gateway.challengeFor(raw)
  // The text names this gateway's origin, so a signature is good here only.
  assert.match(
    challenge,
    new RegExp(`^atrium-userkey-v1\\norigin=${ORIGIN}\\nchallenge=\\d+\\nnonce=[A-Za-z0-9_-]{43}\\nexpires=\\d+$`),
  )
  const signedIn = await gateway.call('POST', '/auth/v1/userkey/verify', {
    challenge,
    signature: signText(challenge, privateKey),
    client: { deviceGuid: 'c1d2e3f4-0000-4000-8000-000000000001' },
  })
  assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body))
  assert.equal(signedIn.body.result.user.crmId, String(user.crmId))
  assert.match(signedIn.cookies[0] ?? '', /^atrium_session=/)
  const session = await gateway.store.db
    .selectFrom('sessions')
    .select('method')
    .where('crm_id', '=', user.crmId)
    .execute()
  assert.ok(session.some((row) => row.method === 'user_key'))
  const audit = await gateway.store.db.selectFrom('login_audit').selectAll().where('method', '=', 'user_key').execute()
  assert.deepEqual(
    audit.map((row) => [row.success, row.crm_id, row.device_guid]),
    [[1, user.crmId, 'c1d2e3f4-0000-4000-8000-000000000001']],
  )
  const [key] = (await gateway.call('GET', '/auth/v1/user-keys', undefined, user.headers)).body.result.keys
  assert.ok(key.lastUsed > 0, 'the key shows when it was last used')

  // The same answer again is a replay: refused, and no session is made.
  const replay = await gateway.call('POST', '/auth/v1/userkey/verify', {
    challenge,
    signature: signText(challenge, privateKey),
  })
  assert.equal(replay.status, 401)
  assert.equal(replay.body.error.code, errorCodes.InvalidCredentials.code)
  assert.deepEqual(replay.cookies, [])
})

forEachDialect('wrong keys, altered texts, other origins and expired challenges sign nobody in', async (t, dialect) => {
  let clock = Date.now()
  const gateway = await started(t, dialect, () => clock)
  const user = await signedInUser(gateway)
  const mine = keyPair()
  const stranger = keyPair()
  await gateway.call('POST', '/auth/v1/user-keys', { name: 'laptop', publicKey: mine.raw }, user.headers)
  const refused = async (body: object, reason: string) => {
    const answer = await gateway.call('POST', '/auth/v1/userkey/verify', body)
    assert.equal(answer.status, 401, reason)
    assert.equal(answer.body.error.code, errorCodes.InvalidCredentials.code, reason)
    assert.deepEqual(answer.cookies, [], reason)
  }

  // Another key's signature of my challenge.
  const first = await gateway.challengeFor(mine.raw)
  await refused({ challenge: first, signature: signText(first, stranger.privateKey) }, 'signed by another key')
  // A wrong answer used the challenge up: the right signature no longer helps.
  await refused({ challenge: first, signature: signText(first, mine.privateKey) }, 'used up by a wrong answer')

  // The text altered after signing (another expiry), or re-addressed to another origin: neither uses it up.
  const second = await gateway.challengeFor(mine.raw)
  const later = second.replace(/expires=(\d+)$/, (_, at) => `expires=${Number(at) + 3_600_000}`)
  await refused({ challenge: later, signature: signText(later, mine.privateKey) }, 'a changed expiry')
  const elsewhere = second.replace(`origin=${ORIGIN}`, 'origin=https://evil.example')
  await refused({ challenge: elsewhere, signature: signText(elsewhere, mine.privateKey) }, 'another origin')
  // Someone who guessed the challenge id but not its nonce cannot burn it: the owner still signs in.
  const guessed = second.replace(/nonce=[A-Za-z0-9_-]{43}/, `nonce=${'A'.repeat(43)}`)
  await refused({ challenge: guessed, signature: signText(guessed, stranger.privateKey) }, 'a guessed nonce')
  const ok = await gateway.call('POST', '/auth/v1/userkey/verify', {
    challenge: second,
    signature: signText(second, mine.privateKey),
  })
  assert.equal(ok.status, 200, 'the guessed nonce left the challenge usable')

  // An unknown key gets a challenge like a registered one (nothing to probe) that nothing answers.
  const unknown = await gateway.challengeFor(stranger.raw)
  await refused({ challenge: unknown, signature: signText(unknown, stranger.privateKey) }, 'a key nobody registered')

  // A challenge answered after its 60 s.
  const third = await gateway.challengeFor(mine.raw)
  clock += 60_001
  await refused({ challenge: third, signature: signText(third, mine.privateKey) }, 'expired')

  // Malformed signatures and texts are refused as credentials, never as a crash.
  const fourth = await gateway.challengeFor(mine.raw)
  await refused({ challenge: fourth, signature: 'A'.repeat(86) }, 'a signature of zeros')
  await refused({ challenge: `${fourth}\u0000`, signature: signText(fourth, mine.privateKey) }, 'a NUL appended')

  const failures = await gateway.store.db
    .selectFrom('login_audit')
    .select(['reason', 'crm_id'])
    .where('method', '=', 'user_key')
    .where('success', '=', 0)
    .execute()
  assert.deepEqual([...new Set(failures.map((row) => row.reason))].sort(), [
    'expired_or_used',
    'invalid_challenge',
    'unknown_key',
    'wrong_signature',
  ])
})

forEachDialect(
  'keys are managed from a session, belong to one user, and bad keys are refused clearly',
  async (t, dialect) => {
    const gateway = await started(t, dialect)
    const alice = await signedInUser(gateway)
    const bob = await signedInUser(gateway)
    const key = keyPair()

    const anonymous = await gateway.call('POST', '/auth/v1/user-keys', { name: 'x', publicKey: key.raw })
    assert.equal(anonymous.status, 401)
    for (const publicKey of ['not a key', 'A'.repeat(43), key.pem.replace('MCowBQYDK2VwAyEA', 'MCowBQYDK2VuAyEA')]) {
      const bad = await gateway.call('POST', '/auth/v1/user-keys', { name: 'bad', publicKey }, alice.headers)
      assert.ok(bad.status === 400, `${publicKey}: ${bad.status}`)
      assert.equal(bad.body.error.code, errorCodes.InvalidRequest.code)
    }
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' })
    const notEd25519 = await gateway.call('POST', '/auth/v1/user-keys', { name: 'rsa', publicKey: rsa }, alice.headers)
    assert.equal(notEd25519.status, 400)

    const added = await gateway.call(
      'POST',
      '/auth/v1/user-keys',
      { name: 'laptop', publicKey: key.raw },
      alice.headers,
    )
    assert.equal(added.status, 200)
    // The same key cannot be registered again, by anyone: one key signs in one user.
    const taken = await gateway.call(
      'POST',
      '/auth/v1/user-keys',
      { name: 'mine too', publicKey: key.pem },
      bob.headers,
    )
    assert.equal(taken.status, 409)
    assert.equal(taken.body.error.code, errorCodes.Conflict.code)

    // Bob cannot remove Alice's key; Alice can, and then it signs nobody in.
    const id = added.body.result.userKey.id
    const foreign = await gateway.call('DELETE', `/auth/v1/user-keys/${id}`, undefined, bob.headers)
    assert.equal(foreign.status, 404)
    const removed = await gateway.call('DELETE', `/auth/v1/user-keys/${id}`, undefined, alice.headers)
    assert.deepEqual(removed.body.result, { removed: true })
    const challenge = await gateway.challengeFor(key.raw)
    const answer = await gateway.call('POST', '/auth/v1/userkey/verify', {
      challenge,
      signature: signText(challenge, key.privateKey),
    })
    assert.equal(answer.status, 401)
  },
)

forEachDialect('of parallel answers to one challenge exactly one signs in', async (t, dialect) => {
  const gateway = await started(t, dialect)
  const user = await signedInUser(gateway)
  const key = keyPair()
  await gateway.call('POST', '/auth/v1/user-keys', { name: 'ci', publicKey: key.raw }, user.headers)
  const challenge = await gateway.challengeFor(key.raw)
  const signature = signText(challenge, key.privateKey)
  const answers = await Promise.all(
    Array.from({ length: 8 }, () => gateway.call('POST', '/auth/v1/userkey/verify', { challenge, signature })),
  )
  assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 401, 401, 401, 401, 401, 401, 401])
})
