import { ApiError, type Service } from '@atrium/platform'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Users } from '../users/users.repository.ts'
import { hashSecret, newToken, requireUserSession } from './caller.ts'
import { Client, SignedIn } from './sign-in.schema.ts'
import type { SignIn } from './sign-in.ts'
import { challengeText, keyFingerprint, normalizePublicKey, parseChallengeText, signatureMatches } from './user-key.ts'
import { MAX_KEYS_PER_USER, type UserKey, type UserKeys } from './user-keys.repository.ts'

export interface UserKeysPluginOptions {
  userKeys: UserKeys
  users: Users
  signIn: SignIn
  /** The gateway's public origin: every challenge names it, so a signature is good for this gateway only. */
  publicOrigin: string
}

const Id = Type.String({ pattern: '^[1-9][0-9]{0,15}$' })
const PublicKey = Type.String({
  minLength: 43,
  maxLength: 400,
  description:
    'The Ed25519 public key: the raw 32 bytes in base64url (43 characters), or a PEM `PUBLIC KEY` (SubjectPublicKeyInfo).',
})

const KeyView = Type.Object({
  id: Id,
  name: Type.String(),
  publicKey: Type.String({ description: 'The raw key, base64url.' }),
  fingerprint: Type.String({ description: '`SHA256:` and the first 16 bytes of the key’s SHA-256, base64url.' }),
  created: Type.Integer(),
  lastUsed: Type.Integer({ description: 'Epoch ms of the last sign-in with the key; 0 when never used.' }),
})

const addKey = {
  body: Type.Object(
    { name: Type.String({ minLength: 1, maxLength: 100 }), publicKey: PublicKey },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ userKey: KeyView }) },
}
const listKeys = { response: { 200: Type.Object({ keys: Type.Array(KeyView) }) } }
const removeKey = { params: Type.Object({ id: Id }), response: { 200: Type.Object({ removed: Type.Boolean() }) } }

const challenge = {
  security: [],
  body: Type.Object({ publicKey: PublicKey }, { additionalProperties: false }),
  response: {
    200: Type.Object({
      challenge: Type.String({ description: 'The exact text to sign (UTF-8, as given) with the private key.' }),
      expiresAt: Type.Integer({ description: 'Epoch ms; the challenge must be answered before.' }),
    }),
  },
}
const verifyBody = {
  security: [],
  body: Type.Object(
    {
      challenge: Type.String({ maxLength: 400, description: 'The challenge text as the challenge call gave it.' }),
      signature: Type.String({
        maxLength: 100,
        description: 'The Ed25519 signature of the text, base64url (64 bytes).',
      }),
      client: Type.Optional(Client),
    },
    { additionalProperties: false },
  ),
  response: { 200: SignedIn },
}

function toKeyView(key: UserKey) {
  return {
    id: String(key.id),
    name: key.name,
    publicKey: key.public_key,
    fingerprint: keyFingerprint(key.public_key),
    created: key.created,
    lastUsed: key.last_used,
  }
}

// Keys are registered from a signed-in session only: a key, an API key or an app may not add keys.
const sessionUser = (request: FastifyRequest) =>
  requireUserSession(request.caller, 'User keys are managed from a signed-in session.')

function publicKeyOf(text: string): string {
  const key = normalizePublicKey(text)
  if (!key) throw new ApiError('InvalidRequest', 'publicKey is not an Ed25519 public key (raw base64url or PEM).')
  return key
}

/**
 * UserKey (spec: "Authentication", sign-in methods): a user registers Ed25519 public keys under
 * /auth/v1/user-keys; a script, CLI or device then signs in by signing a challenge with the
 * private key. A challenge is single use, lives 60 s and names the gateway's origin. An unknown
 * key gets a challenge like any other, which no signature answers, so keys cannot be probed.
 */
export default async function userKeysPlugin(
  app: Service,
  { userKeys, users, signIn, publicOrigin }: UserKeysPluginOptions,
) {
  app.post('/user-keys', { schema: addKey }, async (request) => {
    const caller = sessionUser(request)
    const publicKey = publicKeyOf(request.body.publicKey)
    if ((await userKeys.count(caller.crmId)) >= MAX_KEYS_PER_USER) {
      throw new ApiError('Conflict', `You have ${MAX_KEYS_PER_USER} keys already; remove one first.`)
    }
    const added = await userKeys.add({ crmId: caller.crmId, name: request.body.name.trim(), publicKey })
    if (!added) throw new ApiError('Conflict', 'This key is registered already.')
    request.log.info({ userKeyId: added.id, fingerprint: keyFingerprint(publicKey) }, 'user key added')
    return { userKey: toKeyView(added) }
  })

  app.get('/user-keys', { schema: listKeys }, async (request) => {
    const caller = sessionUser(request)
    return { keys: (await userKeys.list(caller.crmId)).map(toKeyView) }
  })

  app.delete('/user-keys/:id', { schema: removeKey }, async (request) => {
    const caller = sessionUser(request)
    if (!(await userKeys.remove(caller.crmId, Number(request.params.id)))) {
      throw new ApiError('NotFound', 'No such key of yours.')
    }
    request.log.info({ userKeyId: request.params.id }, 'user key removed')
    return { removed: true }
  })

  app.post('/userkey/challenge', { schema: challenge, config: { signIn: true } }, async (request) => {
    const key = await userKeys.byPublicKey(publicKeyOf(request.body.publicKey))
    const nonce = newToken()
    const row = await userKeys.createChallenge(key?.id ?? 0, hashSecret(nonce))
    return {
      challenge: challengeText({ origin: publicOrigin, challengeId: row.id, nonce, expires: row.expires }),
      expiresAt: row.expires,
    }
  })

  app.post('/userkey/verify', { schema: verifyBody, config: { signIn: true } }, async (request, reply) => {
    const { challenge: text, signature, client } = request.body
    const fail = async (reason: string, crmId = 0): Promise<never> => {
      await signIn.record(request, { method: 'user_key', success: false, reason, crmId }, client)
      throw new ApiError('InvalidCredentials', 'The signature does not answer a live challenge of this gateway.')
    }
    const parsed = parseChallengeText(text, publicOrigin)
    if (!parsed) return fail('invalid_challenge')
    const row = await userKeys.consumeChallenge({
      id: parsed.challengeId,
      nonceHash: hashSecret(parsed.nonce),
      expires: parsed.expires,
    })
    if (!row) return fail('expired_or_used')
    const key = row.key_id === 0 ? undefined : await userKeys.byId(row.key_id)
    if (!key) return fail('unknown_key')
    if (!signatureMatches(key.public_key, text, signature)) return fail('wrong_signature', key.crm_id)
    const user = await users.get(key.crm_id)
    if (!user) return fail('unknown_user', key.crm_id)
    await userKeys.markUsed(key.id)
    return signIn.finish(request, reply, { user, method: 'user_key', returnTo: '/', client })
  })
}
