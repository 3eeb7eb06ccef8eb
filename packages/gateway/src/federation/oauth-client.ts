import * as client from 'openid-client'
import type { GatewayConfig } from '../config.ts'
import type { Provider } from './providers.ts'

/** Where every provider sends the browser back; register PublicOrigin + this path at each provider. */
export const RETURN_PATH = '/auth/v1/federated/return'

/** What a provider told about the person who signed in. */
export interface Profile {
  /** The provider's stable id of the account. */
  subject: string
  /** Lower-case email address; '' when the provider gave none. */
  email: string
  /** The provider vouches that the person controls `email`. */
  emailVerified: boolean
  name: string
}

/** The secrets of one flow: kept on the gateway from start to return. */
export interface FlowSecrets {
  state: string
  nonce: string
  codeVerifier: string
}

/** The provider refused, or answered something that does not check out; `reason` goes to the login audit. */
export class FlowRefused extends Error {
  readonly reason: string

  constructor(reason: string, message: string) {
    super(message)
    this.reason = reason
  }
}

// Plain http is accepted from a provider on this machine only (a local provider, the tests).
function isLoopback(url: string): boolean {
  try {
    const { protocol, hostname } = new URL(url)
    return protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(hostname)
  } catch {
    return false
  }
}

function isVerified(value: unknown): boolean {
  // Apple sends the string "true".
  return value === true || value === 'true'
}

/**
 * Why openid-client refused an ID token's JWS, or undefined for any other failure. It accepts only
 * an asymmetric algorithm the provider advertises (`id_token_signing_alg_values_supported`, RS256
 * when it advertises none; never `none` or HS*) and a signature by a key of the provider's JWKS
 * that fits the header's kid and alg. The JWKS is fetched from `jwks_uri` on first use and kept up
 * to five minutes; an unknown kid fetches it again once the kept copy is a minute old.
 */
function idTokenRefusal(error: unknown): string | undefined {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as { code?: unknown }).code
    if (code === 'OAUTH_KEY_SELECTION_FAILED') return 'no published key of the provider fits it'
    if (code === 'OAUTH_UNSUPPORTED_OPERATION') return 'it is not signed in a way the gateway verifies'
    if (cause.message === 'unexpected JWT "alg" header parameter') return 'its algorithm is not one the provider uses'
    if (cause.message === 'JWT signature verification failed') return 'its signature is wrong'
  }
  return undefined
}

interface GitHubEmail {
  email?: unknown
  verified?: unknown
  primary?: unknown
}

/**
 * The OAuth flows on openid-client: the authorization URL of a start (PKCE S256, state, and for
 * OpenID Connect a nonce) and the code exchange of a return, checked against the flow's secrets.
 * OpenID providers are found by discovery from their issuer, once per process.
 */
export function createOAuthClients({
  publicOrigin,
  github,
}: {
  publicOrigin: string
  github: GatewayConfig['OAuth']['GitHub']
}) {
  const redirectUri = new URL(RETURN_PATH, publicOrigin).href
  const configurations = new Map<string, Promise<client.Configuration>>()

  function configurationOf(provider: Provider): Promise<client.Configuration> {
    const key = [provider.id, provider.issuer, provider.clientId, provider.clientSecret].join('\n')
    let found = configurations.get(key)
    if (!found) {
      found =
        provider.kind === 'github'
          ? Promise.resolve(gitHubConfiguration(provider))
          : client.discovery(
              new URL(provider.issuer),
              provider.clientId,
              provider.clientSecret,
              undefined,
              // Every ID token's signature is checked against the provider's JWKS (see idTokenRefusal).
              {
                execute: [
                  client.enableNonRepudiationChecks,
                  ...(isLoopback(provider.issuer) ? [client.allowInsecureRequests] : []),
                ],
              },
            )
      configurations.set(key, found)
      found.catch(() => configurations.delete(key))
    }
    return found
  }

  function gitHubConfiguration(provider: Provider): client.Configuration {
    const configuration = new client.Configuration(
      {
        issuer: new URL(github.AuthorizationUrl).origin,
        authorization_endpoint: github.AuthorizationUrl,
        token_endpoint: github.TokenUrl,
      },
      provider.clientId,
      provider.clientSecret,
    )
    if (isLoopback(github.TokenUrl)) client.allowInsecureRequests(configuration)
    return configuration
  }

  async function gitHubProfile(configuration: client.Configuration, accessToken: string): Promise<Profile> {
    const get = async (path: string): Promise<unknown> => {
      const headers = new Headers({ accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' })
      const response = await client.fetchProtectedResource(
        configuration,
        accessToken,
        new URL(`${github.ApiUrl.replace(/\/$/, '')}${path}`),
        'GET',
        undefined,
        headers,
      )
      if (!response.ok) throw new FlowRefused('provider_error', `GitHub answered ${response.status} to GET ${path}.`)
      return response.json()
    }
    const user = (await get('/user')) as { id?: unknown; login?: unknown; name?: unknown }
    if (typeof user.id !== 'number' && typeof user.id !== 'string') {
      throw new FlowRefused('provider_error', 'GitHub’s /user named no id.')
    }
    const emails = (await get('/user/emails')) as GitHubEmail[]
    const verified = Array.isArray(emails)
      ? emails.filter((entry) => typeof entry.email === 'string' && entry.verified === true)
      : []
    const chosen = verified.find((entry) => entry.primary === true) ?? verified[0]
    const name =
      typeof user.name === 'string' && user.name ? user.name : typeof user.login === 'string' ? user.login : ''
    return {
      subject: String(user.id),
      email: chosen ? String(chosen.email).toLowerCase() : '',
      emailVerified: chosen !== undefined,
      name,
    }
  }

  return {
    redirectUri,

    /** The address to send the browser to; PKCE S256 always, a nonce for OpenID Connect. */
    async authorizationUrl(provider: Provider, secrets: FlowSecrets): Promise<URL> {
      const configuration = await configurationOf(provider)
      const parameters: Record<string, string> = {
        redirect_uri: redirectUri,
        scope: provider.scopes,
        state: secrets.state,
        code_challenge: await client.calculatePKCECodeChallenge(secrets.codeVerifier),
        code_challenge_method: 'S256',
      }
      if (provider.kind === 'oidc') parameters.nonce = secrets.nonce
      return client.buildAuthorizationUrl(configuration, parameters)
    },

    /**
     * Exchanges the code of a return (`search`: the return's query string) with the flow's PKCE
     * verifier, checks state, issuer and (OpenID) the ID token's nonce, and answers the profile.
     */
    async complete(provider: Provider, search: string, secrets: FlowSecrets): Promise<Profile> {
      const configuration = await configurationOf(provider)
      const currentUrl = new URL(`${RETURN_PATH}${search}`, publicOrigin)
      let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>
      try {
        tokens = await client.authorizationCodeGrant(
          configuration,
          currentUrl,
          {
            pkceCodeVerifier: secrets.codeVerifier,
            expectedState: secrets.state,
            ...(provider.kind === 'oidc' ? { expectedNonce: secrets.nonce, idTokenExpected: true } : {}),
          },
          { redirect_uri: redirectUri },
        )
      } catch (error) {
        const problem = idTokenRefusal(error)
        if (problem) {
          throw new FlowRefused('id_token_signature', `${provider.name}’s answer was refused: ${problem}.`)
        }
        const code = (error as { error?: unknown }).error
        throw new FlowRefused(
          typeof code === 'string' ? `provider_${code}`.slice(0, 64) : 'provider_refused',
          `The provider did not complete the sign-in: ${(error as Error).message}`,
        )
      }
      if (provider.kind === 'github') return gitHubProfile(configuration, tokens.access_token)
      const claims = tokens.claims()
      if (!claims) throw new FlowRefused('no_id_token', 'The provider sent no ID token.')
      let info: Record<string, unknown> = { ...claims }
      if (typeof claims.email !== 'string' && configuration.serverMetadata().userinfo_endpoint) {
        info = { ...(await client.fetchUserInfo(configuration, tokens.access_token, claims.sub)), ...info }
      }
      const email = typeof info.email === 'string' ? info.email.toLowerCase() : ''
      return {
        subject: claims.sub,
        email,
        emailVerified: email !== '' && isVerified(info.email_verified),
        name: typeof info.name === 'string' ? info.name : '',
      }
    },
  }
}

export type OAuthClients = ReturnType<typeof createOAuthClients>
