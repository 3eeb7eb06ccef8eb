import { createHmac } from 'node:crypto'
import { ApiError, type Service } from '@atrium/platform'
import type {
  AuthenticationResponseJSON,
  generateAuthenticationOptions,
  RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server'
import type { FastifyRequest } from 'fastify'
import type { GatewayConfig } from '../config.ts'
import { ContactKind, normalizeEmail, type Users } from '../users/users.repository.ts'
import { requireUserSession } from './caller.ts'
import {
  CEREMONY_TTL_MS,
  type CredentialKind,
  MAX_CREDENTIALS_PER_USER,
  type Passkeys,
  type WebauthnCredential,
} from './passkeys.repository.ts'
import {
  authenticateOptions,
  authenticateVerify,
  listCredentials,
  registerOptions,
  registerVerify,
  removeCredential,
  renameCredential,
} from './passkeys.schema.ts'
import { relyingPartyId } from './relying-party.ts'
import { validateReturnAddress } from './return-address.ts'
import type { SignIn } from './sign-in.ts'

export interface PasskeysPluginOptions {
  passkeys: Passkeys
  users: Users
  signIn: SignIn
  publicOrigin: string
  settings: GatewayConfig['WebAuthn']
  /** Keys the decoy credential ids answered for unknown email addresses. */
  decoyKey: string
}

/** @simplewebauthn/server, loaded with the first ceremony: it adds a quarter second to every gateway start. */
const webauthn = () => import('@simplewebauthn/server')

/** The login audit's and the session's method of each kind (spec: PassKey, Fido2Key). */
const METHOD: Record<CredentialKind, string> = { passkey: 'passkey', security_key: 'fido2_key' }

/** The transports an authenticator named at registration (stored comma-separated). */
function transportsOf(credential: WebauthnCredential): string[] {
  return credential.transports === '' ? [] : credential.transports.split(',')
}

function toView(credential: WebauthnCredential) {
  return {
    id: String(credential.id),
    name: credential.name,
    kind: credential.kind === 'security_key' ? ('security_key' as const) : ('passkey' as const),
    backedUp: credential.backed_up === 1,
    multiDevice: credential.device_type === 'multiDevice',
    transports: transportsOf(credential),
    created: credential.created,
    lastUsed: credential.last_used,
  }
}

const sessionUser = (request: FastifyRequest) =>
  requireUserSession(request.caller, 'Passkeys and security keys are managed from a signed-in session.')

/**
 * PassKey and Fido2Key (spec: "Authentication", Keys) on WebAuthn with @simplewebauthn/server: a
 * signed-in user registers passkeys (discoverable, user verification required) and security keys
 * (user verification as configured), names and removes them; anyone signs in with one, with or
 * without naming their email first. The relying party is the host of PublicOrigin, or the domain
 * WebAuthn.RpId names (relying-party.ts); PublicOrigin is the only origin accepted. Each ceremony's
 * challenge is single use and lives five minutes; a sign-in must show a larger signature counter
 * than the last (unless the authenticator keeps none) and the same backup eligibility as at
 * registration.
 */
export default async function passkeysPlugin(
  app: Service,
  { passkeys, users, signIn, publicOrigin, settings, decoyKey }: PasskeysPluginOptions,
) {
  const rpID = relyingPartyId({ PublicOrigin: publicOrigin, WebAuthn: settings })
  const requireVerification = (kind: string) =>
    kind === 'passkey' || settings.SecurityKeyUserVerification === 'required'

  /** Credential ids shown for an email nobody registered keys under: stable, so repeated asks look alike. */
  function decoyCredentialId(email: string): string {
    return createHmac('sha256', decoyKey).update(`webauthn-decoy:${email}`).digest('base64url')
  }

  app.post('/passkeys/register/options', { schema: registerOptions }, async (request) => {
    const caller = sessionUser(request)
    const { kind } = request.body
    const existing = await passkeys.list(caller.crmId)
    if (existing.length >= MAX_CREDENTIALS_PER_USER) {
      throw new ApiError('Conflict', `You have ${MAX_CREDENTIALS_PER_USER} keys already; remove one first.`)
    }
    const user = await users.get(caller.crmId)
    const email = (await users.contactsOf(caller.crmId)).find((contact) => contact.kind === ContactKind.Email)?.value
    const userName = email ?? (user?.name || `user ${caller.crmId}`)
    const { generateRegistrationOptions } = await webauthn()
    const options = await generateRegistrationOptions({
      rpName: settings.RpName,
      rpID,
      userName,
      userDisplayName: user?.name || userName,
      userID: new TextEncoder().encode(String(caller.crmId)),
      timeout: CEREMONY_TTL_MS,
      attestationType: 'none',
      excludeCredentials: existing.map((credential) => ({
        id: credential.credential_id,
        transports: transportsOf(credential),
      })),
      authenticatorSelection:
        kind === 'passkey'
          ? { residentKey: 'required', userVerification: 'required' }
          : {
              residentKey: 'discouraged',
              authenticatorAttachment: 'cross-platform',
              userVerification: settings.SecurityKeyUserVerification,
            },
      ...(kind === 'security_key' ? { preferredAuthenticatorType: 'securityKey' as const } : {}),
    })
    const row = await passkeys.createChallenge({
      crm_id: caller.crmId,
      purpose: 'register',
      kind,
      challenge: options.challenge,
    })
    return { challengeId: String(row.id), options }
  })

  app.post('/passkeys/register/verify', { schema: registerVerify }, async (request) => {
    const caller = sessionUser(request)
    const row = await passkeys.consumeChallenge(Number(request.body.challengeId), 'register', caller.crmId)
    if (!row) {
      throw new ApiError('ChallengeExpired', 'This registration expired or was already used; start again.')
    }
    let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>
    try {
      const { verifyRegistrationResponse } = await webauthn()
      verification = await verifyRegistrationResponse({
        response: request.body.response as unknown as RegistrationResponseJSON,
        expectedChallenge: row.challenge,
        expectedOrigin: publicOrigin,
        expectedRPID: rpID,
        requireUserVerification: requireVerification(row.kind),
      })
    } catch (error) {
      request.log.info({ err: error }, 'passkey registration refused')
      throw new ApiError('InvalidRequest', `The authenticator's answer was not accepted: ${(error as Error).message}`)
    }
    if (!verification.verified) throw new ApiError('InvalidRequest', "The authenticator's answer was not accepted.")
    const { credential, credentialDeviceType, credentialBackedUp } = verification.registrationInfo
    const added = await passkeys.add({
      crm_id: caller.crmId,
      credential_id: credential.id,
      public_key: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: (credential.transports ?? []).join(','),
      kind: row.kind,
      device_type: credentialDeviceType,
      backed_up: credentialBackedUp ? 1 : 0,
      name: request.body.name.trim(),
    })
    if (!added) throw new ApiError('Conflict', 'This key is registered already.')
    request.log.info({ credentialId: added.id, kind: added.kind }, 'passkey registered')
    return { credential: toView(added) }
  })

  app.get('/passkeys', { schema: listCredentials }, async (request) => {
    const caller = sessionUser(request)
    return { credentials: (await passkeys.list(caller.crmId)).map(toView) }
  })

  app.patch('/passkeys/:id', { schema: renameCredential }, async (request) => {
    const caller = sessionUser(request)
    const renamed = await passkeys.rename(caller.crmId, Number(request.params.id), request.body.name.trim())
    if (!renamed) throw new ApiError('NotFound', 'No such key of yours.')
    return { credential: toView(renamed) }
  })

  app.delete('/passkeys/:id', { schema: removeCredential }, async (request) => {
    const caller = sessionUser(request)
    if (!(await passkeys.remove(caller.crmId, Number(request.params.id)))) {
      throw new ApiError('NotFound', 'No such key of yours.')
    }
    request.log.info({ credentialId: request.params.id }, 'passkey removed')
    return { removed: true }
  })

  app.post(
    '/passkeys/authenticate/options',
    { schema: authenticateOptions, config: { signIn: true } },
    async (request) => {
      let allowCredentials: { id: string; transports?: string[] }[] = []
      let crmId = 0
      if (request.body.email !== undefined) {
        const email = normalizeEmail(request.body.email)
        if (!email) throw new ApiError('InvalidRequest', 'email is not a valid email address.')
        const contact = await users.findContact(ContactKind.Email, email)
        const credentials = contact ? await passkeys.list(contact.crm_id) : []
        crmId = contact?.crm_id ?? 0
        allowCredentials =
          credentials.length > 0
            ? credentials.map((credential) => ({
                id: credential.credential_id,
                transports: transportsOf(credential),
              }))
            : [{ id: decoyCredentialId(email) }]
      }
      const { generateAuthenticationOptions } = await webauthn()
      const options = await generateAuthenticationOptions({
        rpID,
        timeout: CEREMONY_TTL_MS,
        userVerification: 'preferred',
        allowCredentials: allowCredentials as Parameters<typeof generateAuthenticationOptions>[0]['allowCredentials'],
      })
      const row = await passkeys.createChallenge({
        crm_id: crmId,
        purpose: 'authenticate',
        kind: '',
        challenge: options.challenge,
      })
      return { challengeId: String(row.id), options }
    },
  )

  app.post(
    '/passkeys/authenticate/verify',
    { schema: authenticateVerify, config: { signIn: true } },
    async (request, reply) => {
      const { client } = request.body
      const response = request.body.response as unknown as AuthenticationResponseJSON
      const returnTo = validateReturnAddress(request.body.returnTo ?? '')
      const credential = await passkeys.byCredentialId(response.id)
      const method = METHOD[credential?.kind === 'security_key' ? 'security_key' : 'passkey']
      const fail = async (reason: string): Promise<never> => {
        await signIn.record(request, { method, success: false, reason, crmId: credential?.crm_id ?? 0 }, client)
        throw new ApiError(
          'InvalidCredentials',
          'This key could not sign you in. Try again, or use another way to sign in.',
        )
      }
      const row = await passkeys.consumeChallenge(Number(request.body.challengeId), 'authenticate')
      if (!row) return fail('expired_or_used')
      if (!credential) return fail('unknown_credential')
      // Options made for one user's email are answered by that user's keys only.
      if (row.crm_id !== 0 && row.crm_id !== credential.crm_id) return fail('other_user')
      let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>
      try {
        const { verifyAuthenticationResponse } = await webauthn()
        verification = await verifyAuthenticationResponse({
          response,
          expectedChallenge: row.challenge,
          expectedOrigin: publicOrigin,
          expectedRPID: rpID,
          credential: {
            id: credential.credential_id,
            publicKey: new Uint8Array(Buffer.from(credential.public_key, 'base64url')),
            counter: credential.counter,
          },
          requireUserVerification: requireVerification(credential.kind),
        })
      } catch (error) {
        request.log.info({ err: error }, 'passkey assertion refused')
        const message = (error as Error).message
        return fail(/counter/i.test(message) ? 'counter_not_increased' : 'invalid_assertion')
      }
      const { newCounter, credentialDeviceType, credentialBackedUp } = verification.authenticationInfo
      if (!verification.verified) return fail('invalid_assertion')
      // Backup eligibility is fixed when a credential is made; a change means another authenticator.
      if (credentialDeviceType !== credential.device_type) return fail('backup_eligibility_changed')
      if (!(await passkeys.used(credential, newCounter, credentialBackedUp))) return fail('counter_not_increased')
      const user = await users.get(credential.crm_id)
      if (!user) return fail('unknown_user')
      return signIn.finish(request, reply, { user, method, returnTo, client })
    },
  )
}
