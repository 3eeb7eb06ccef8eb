import { Type } from 'typebox'
import { Client, ReturnTo, SignedIn } from './sign-in.schema.ts'

const Id = Type.String({ pattern: '^[1-9][0-9]{0,15}$' })
const Name = Type.String({ minLength: 1, maxLength: 100 })
const ChallengeId = Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: 'Id from the options call.' })
const Kind = Type.Union([Type.Literal('passkey'), Type.Literal('security_key')], {
  description:
    '`passkey`: a discoverable credential on this device or a phone (platform or hybrid), user verification required. `security_key` (Fido2Key): a roaming key, user verification as `WebAuthn.SecurityKeyUserVerification` says.',
})

/** What the browser's navigator.credentials answered, as @simplewebauthn/browser serialises it. */
const CredentialResponse = Type.Object(
  {
    id: Type.String({ maxLength: 1400 }),
    rawId: Type.String({ maxLength: 1400 }),
    type: Type.Literal('public-key'),
    response: Type.Record(Type.String(), Type.Unknown()),
    clientExtensionResults: Type.Record(Type.String(), Type.Unknown()),
    authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
  },
  {
    description:
      'The PublicKeyCredential as JSON (`startRegistration` / `startAuthentication` of @simplewebauthn/browser).',
  },
)

export const CredentialView = Type.Object({
  id: Id,
  name: Type.String(),
  kind: Kind,
  backedUp: Type.Boolean({ description: 'The authenticator said the credential is backed up (synced).' }),
  multiDevice: Type.Boolean({ description: 'The credential may be synced to other devices (backup eligible).' }),
  transports: Type.Array(Type.String()),
  created: Type.Integer(),
  lastUsed: Type.Integer({ description: 'Epoch ms of the last sign-in with it; 0 when never used.' }),
})

const Ceremony = Type.Object({
  challengeId: ChallengeId,
  options: Type.Unknown({ description: 'The options for navigator.credentials, as JSON.' }),
})

export const registerOptions = {
  body: Type.Object({ kind: Kind }, { additionalProperties: false }),
  response: { 200: Ceremony },
}

export const registerVerify = {
  body: Type.Object(
    { challengeId: ChallengeId, name: Name, response: CredentialResponse },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ credential: CredentialView }) },
}

export const listCredentials = { response: { 200: Type.Object({ credentials: Type.Array(CredentialView) }) } }

export const renameCredential = {
  params: Type.Object({ id: Id }),
  body: Type.Object({ name: Name }, { additionalProperties: false }),
  response: { 200: Type.Object({ credential: CredentialView }) },
}

export const removeCredential = {
  params: Type.Object({ id: Id }),
  response: { 200: Type.Object({ removed: Type.Boolean() }) },
}

export const authenticateOptions = {
  security: [],
  body: Type.Object(
    {
      email: Type.Optional(
        Type.String({
          maxLength: 254,
          description:
            'Sign in as this user: the options list their keys. Without it, any passkey of this site may answer.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  response: { 200: Ceremony },
}

export const authenticateVerify = {
  security: [],
  body: Type.Object(
    {
      challengeId: ChallengeId,
      response: CredentialResponse,
      returnTo: Type.Optional(ReturnTo),
      client: Type.Optional(Client),
    },
    { additionalProperties: false },
  ),
  response: { 200: SignedIn },
}
