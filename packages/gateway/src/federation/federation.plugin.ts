import { ApiError, ContactFlags, type Service } from '@atrium/platform'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { readCookie } from '../auth/authenticate.ts'
import { hashSecret, newToken, requireUserSession, secretMatches } from '../auth/caller.ts'
import { sendPage, signInFailedPage } from '../auth/magic-link-page.ts'
import { returnUrl, validateReturnAddress } from '../auth/return-address.ts'
import type { SignIn } from '../auth/sign-in.ts'
import type { GatewayConfig } from '../config.ts'
import { ContactKind, normalizeEmail, type Users } from '../users/users.repository.ts'
import type { Federation } from './federation.repository.ts'
import { createOAuthClients, FlowRefused, type Profile } from './oauth-client.ts'
import { configuredProviders, type Provider, partnerProvider } from './providers.ts'
import { TELEGRAM_FIELDS, type TelegramData, telegramDataProblem } from './telegram.ts'
import { telegramWidgetPage } from './telegram-page.ts'

export interface FederationPluginOptions {
  federation: Federation
  users: Users
  signIn: SignIn
  publicOrigin: string
  settings: GatewayConfig['OAuth']
  /** Sessions.CookieName; the flow's state cookie is named after it. */
  cookieName: string
  now: () => number
  /** How many other ways the user has to sign in (verified contacts, passkeys, user keys), for unlinking. */
  otherSignInMethods: (crmId: number) => Promise<number>
}

const ProviderView = Type.Object({
  id: Type.String({ description: 'Pass as `provider` to /federated/start.' }),
  name: Type.String({ description: 'The name to show.' }),
  logo: Type.String({ description: 'A logo URL; empty for the built-in methods.' }),
  kind: Type.Union([Type.Literal('oidc'), Type.Literal('github'), Type.Literal('telegram')]),
})

const IdentityView = Type.Object({
  id: Type.String(),
  provider: Type.String({ description: 'The provider’s id in the catalogue.' }),
  name: Type.String({ description: 'The provider’s name to show (its id once it is no longer configured).' }),
  email: Type.String({ description: 'The verified email it was linked by; empty when none.' }),
  created: Type.Integer(),
  lastUsed: Type.Integer(),
})
const listIdentities = { response: { 200: Type.Object({ identities: Type.Array(IdentityView) }) } }
const unlinkIdentity = {
  params: Type.Object({ id: Type.String({ pattern: '^[1-9][0-9]{0,15}$' }) }),
  response: { 200: Type.Object({ removed: Type.Boolean() }) },
}

const listProviders = {
  security: [],
  response: { 200: Type.Object({ providers: Type.Array(ProviderView) }) },
}
const start = {
  security: [],
  querystring: Type.Object({
    provider: Type.String({ minLength: 1, maxLength: 64 }),
    returnTo: Type.Optional(Type.String({ description: 'A path on this site to go to after sign-in (default /).' })),
  }),
  response: {
    302: {
      description:
        'To the provider’s sign-in page (Location), with a short-lived HttpOnly cookie holding the flow’s state; it comes back to /auth/v1/federated/return, which sends the browser to returnTo on this site, signed in.',
      content: { 'text/plain': { schema: Type.String() } },
    },
  },
}
// The return and the widget page are not in the OpenAPI document (spec: the return's "method and
// parameters are not shown"); their query carries a code and a state, so requests log at warn only.
const returnSchema = {
  hide: true,
  querystring: Type.Record(Type.String(), Type.String()),
}
const telegramPage = { hide: true, querystring: Type.Object({ state: Type.String({ maxLength: 100 }) }) }

function auditMethod(provider: Provider): string {
  return provider.partner
    ? `federation_${provider.id}`
    : provider.kind === 'telegram'
      ? 'telegram'
      : `oauth_${provider.id}`
}

/**
 * OAuth sign-in and Federation v2 (docs/gateway.md, "OAuth and federated sign-in"): the catalogue
 * of configured providers and partners, a start that sends the browser to the provider with PKCE,
 * state and nonce (the state also in a short-lived HttpOnly cookie on this browser), and a return
 * that checks them, finds or makes the user and sends the browser to the return address rebuilt
 * from PublicOrigin. Telegram's Login Widget takes the same start and return.
 */
export default async function federationPlugin(
  app: Service,
  { federation, users, signIn, publicOrigin, settings, cookieName, now, otherSignInMethods }: FederationPluginOptions,
) {
  const clients = createOAuthClients({ publicOrigin, github: settings.GitHub })
  const configured = configuredProviders(settings)
  const stateCookie = `${cookieName}_oauth`
  const cookieAttributes = `Path=/auth/v1/federated/; HttpOnly; SameSite=Lax${publicOrigin.startsWith('https:') ? '; Secure' : ''}`

  async function catalogue(): Promise<Provider[]> {
    return [...configured, ...(await federation.partners.list()).map(partnerProvider)]
  }

  async function providerById(id: string): Promise<Provider | undefined> {
    return configured.find((provider) => provider.id === id) ?? (await catalogue()).find((p) => p.id === id)
  }

  /** The user a proven profile signs in: linked before, or linked now by a verified email, or new. */
  async function userFor(provider: Provider, profile: Profile): Promise<number> {
    const linked = await federation.identity(provider.id, profile.subject)
    if (linked) {
      await federation.markUsed(linked.id)
      return linked.crm_id
    }
    const email = profile.emailVerified ? normalizeEmail(profile.email) : undefined
    if (!email) return federation.createUserWith(provider.id, profile.subject)
    const { user } = await users.userForContact(ContactKind.Email, email, ContactFlags.Verified)
    const owner = await federation.link({ crmId: user.crm_id, provider: provider.id, subject: profile.subject, email })
    // A linked account may be a contact the modules are told of (a Telegram login; docs/crm.md).
    await users.touch(owner)
    return owner
  }

  app.get('/federated/identities', { schema: listIdentities }, async (request) => {
    const caller = requireUserSession(request.caller, 'Linked accounts are listed for a signed-in session.')
    const identities = await federation.identitiesOf(caller.crmId)
    const providers = await catalogue()
    return {
      identities: identities.map((identity) => ({
        id: String(identity.id),
        provider: identity.provider,
        name: providers.find((provider) => provider.id === identity.provider)?.name ?? identity.provider,
        email: identity.email,
        created: identity.created,
        lastUsed: identity.last_used,
      })),
    }
  })

  // Unlinking never removes the last way a person has to sign in.
  app.delete('/federated/identities/:id', { schema: unlinkIdentity }, async (request) => {
    const caller = requireUserSession(request.caller, 'Linked accounts are managed from a signed-in session.')
    const identities = await federation.identitiesOf(caller.crmId)
    const identity = identities.find((linked) => String(linked.id) === request.params.id)
    if (!identity) throw new ApiError('NotFound', 'No such linked account of yours.')
    if (identities.length === 1 && (await otherSignInMethods(caller.crmId)) === 0) {
      throw new ApiError(
        'Conflict',
        'This is your only way to sign in; add an email, a passkey or another account first.',
      )
    }
    if (await federation.unlink(caller.crmId, identity.id)) await users.touch(caller.crmId)
    return { removed: true }
  })

  app.get('/federated/providers', { schema: listProviders }, async () => ({
    providers: (await catalogue()).map(({ id, name, logo, kind }) => ({ id, name, logo, kind })),
  }))

  app.get('/federated/start', { schema: start, config: { signIn: true } }, async (request, reply) => {
    const returnTo = validateReturnAddress(request.query.returnTo ?? '')
    const provider = await providerById(request.query.provider)
    if (!provider) throw new ApiError('NotFound', 'No such sign-in provider; see GET /auth/v1/federated/providers.')
    const secrets = { state: newToken(), nonce: newToken(), codeVerifier: newToken() }
    let target: string
    if (provider.kind === 'telegram') {
      target = new URL(`/auth/v1/federated/telegram?state=${secrets.state}`, publicOrigin).href
    } else {
      try {
        target = (await clients.authorizationUrl(provider, secrets)).href
      } catch (error) {
        request.log.warn({ provider: provider.id, err: (error as Error).message }, 'provider discovery failed')
        throw new ApiError('BadGateway', `${provider.name} cannot be reached; try again later.`)
      }
    }
    await federation.flows.create({
      state_hash: hashSecret(secrets.state),
      provider: provider.id,
      code_verifier: secrets.codeVerifier,
      nonce: provider.kind === 'oidc' ? secrets.nonce : '',
      return_to: returnTo,
      expires: now() + settings.FlowTtlSeconds * 1000,
    })
    reply.header(
      'set-cookie',
      `${stateCookie}=${secrets.state}; ${cookieAttributes}; Max-Age=${settings.FlowTtlSeconds}`,
    )
    return reply.redirect(target, 302)
  })

  app.get(
    '/federated/telegram',
    { schema: telegramPage, logLevel: 'warn', config: { signIn: true, envelope: false } },
    async (request, reply) => {
      const telegram = configured.find((provider) => provider.kind === 'telegram')
      if (!telegram) throw new ApiError('NotFound', 'Telegram sign-in is not configured.')
      const authUrl = new URL(
        `/auth/v1/federated/return?state=${encodeURIComponent(request.query.state)}`,
        publicOrigin,
      )
      return telegramWidgetPage(reply, { botName: telegram.clientId, authUrl: authUrl.href, title: telegram.name })
    },
  )

  async function complete(request: FastifyRequest, reply: FastifyReply, query: Record<string, string>) {
    const clearState = `${stateCookie}=; ${cookieAttributes}; Max-Age=0`
    let method = 'oauth'
    // A browser gets a page that says what happened and leads back to sign-in; a script the envelope.
    const fail = async (reason: string, message: string): Promise<FastifyReply> => {
      await signIn.record(request, { method, success: false, reason, crmId: 0 })
      reply.header('set-cookie', clearState)
      if (!/\btext\/html\b/.test(request.headers.accept ?? '')) throw new ApiError('InvalidCredentials', message)
      return sendPage(reply.code(401), signInFailedPage(message))
    }
    const state = query.state ?? ''
    const bound = readCookie(request.headers.cookie, stateCookie)
    if (state === '' || bound === undefined || !secretMatches(state, hashSecret(bound))) {
      return fail('state_mismatch', 'This sign-in was not started in this browser; start it again.')
    }
    const flow = await federation.flows.consume(hashSecret(state))
    if (!flow) return fail('expired_or_used', 'This sign-in has expired or was completed already; start it again.')
    const provider = await providerById(flow.provider)
    if (!provider) return fail('unknown_provider', 'The provider of this sign-in is no longer configured.')
    method = auditMethod(provider)
    let profile: Profile
    if (provider.kind === 'telegram') {
      const data: TelegramData = {}
      for (const field of TELEGRAM_FIELDS) if (query[field] !== undefined) data[field] = query[field]
      const problem = telegramDataProblem(data, {
        botToken: provider.clientSecret,
        maxAgeSeconds: settings.Telegram.MaxAgeSeconds,
        now: now(),
      })
      if (problem) return fail(problem, 'The Telegram sign-in data does not check out.')
      const name = [data.first_name, data.last_name].filter(Boolean).join(' ')
      profile = { subject: data.id ?? '', email: '', emailVerified: false, name }
    } else {
      if (query.error)
        return fail('provider_denied', `${provider.name} did not sign you in (${query.error.slice(0, 64)}).`)
      try {
        profile = await clients.complete(provider, new URL(request.url, publicOrigin).search, {
          state,
          nonce: flow.nonce,
          codeVerifier: flow.code_verifier,
        })
      } catch (error) {
        if (error instanceof FlowRefused) return fail(error.reason, error.message)
        request.log.warn({ provider: provider.id, err: (error as Error).message }, 'federated sign-in failed')
        return fail('provider_error', `${provider.name} could not complete the sign-in.`)
      }
    }
    const user = await users.get(await userFor(provider, profile))
    if (!user) return fail('unknown_user', 'The account of this sign-in is gone.')
    await signIn.finish(request, reply, { user, method, returnTo: flow.return_to })
    reply.header('set-cookie', clearState)
    return reply.redirect(returnUrl(publicOrigin, flow.return_to), 302)
  }

  app.get('/federated/return', { schema: returnSchema, logLevel: 'warn', config: { signIn: true } }, (request, reply) =>
    complete(request, reply, request.query),
  )
}
