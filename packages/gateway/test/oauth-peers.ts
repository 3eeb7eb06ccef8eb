import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import Provider from 'oidc-provider'

/** An account of the test OpenID provider, by the login typed at its sign-in form. */
export interface PeerAccount {
  email?: string
  emailVerified?: boolean
  name?: string
}

async function listenOn(t: TestContext, server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  server.unref()
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** What a test changes at a running provider: ID tokens on their way out, keys added to its JWKS. */
export interface PeerTampering {
  /** Rewrites the `id_token` of every token response while set. */
  idToken?: (idToken: string) => string
  /** Public keys published in the JWKS after the provider's own (a key rotation). */
  extraKeys: JsonWebKey[]
}

/**
 * A real OpenID provider (`oidc-provider`) on port 0 with one client whose redirect URI is the
 * gateway's return address; anyone signs in by typing a login at its form, and gets the claims
 * `accounts` gives that login. It signs ID tokens with `signingKey` (kid `signingKid`), and
 * `tampering` changes its token responses and JWKS the way an attacker or a key rotation would;
 * `served` counts the JWKS fetches.
 */
export async function startOidcProvider(
  t: TestContext,
  {
    clientId,
    clientSecret,
    redirectUri,
    accounts,
  }: {
    clientId: string
    clientSecret: string
    redirectUri: string
    accounts: Record<string, PeerAccount>
  },
) {
  const server = createServer()
  const issuer = await listenOn(t, server)
  const signingKid = `peer-${randomBytes(4).toString('hex')}`
  const { privateKey: signingKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const tampering: PeerTampering = { extraKeys: [] }
  /** How often the JWKS was fetched. */
  const served = { jwks: 0 }
  const provider = new Provider(issuer, {
    jwks: { keys: [{ ...signingKey.export({ format: 'jwk' }), kid: signingKid, use: 'sig' }] },
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri] }],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    pkce: { required: () => true },
    async findAccount(_ctx, id) {
      const account = accounts[id] ?? {}
      return {
        accountId: id,
        async claims() {
          return {
            sub: id,
            ...(account.email ? { email: account.email, email_verified: account.emailVerified === true } : {}),
            ...(account.name ? { name: account.name } : {}),
          }
        },
      }
    },
  })
  provider.use(async (ctx, next) => {
    await next()
    const body = ctx.body as { id_token?: string; keys?: JsonWebKey[] } | undefined
    if (ctx.oidc?.route === 'token' && body?.id_token && tampering.idToken)
      body.id_token = tampering.idToken(body.id_token)
    if (ctx.oidc?.route === 'jwks' && body?.keys) {
      served.jwks++
      body.keys = [...body.keys, ...tampering.extraKeys]
    }
  })
  server.on('request', provider.callback())
  return { issuer, provider, signingKey, signingKid, tampering, served }
}

/** Cookies a browser would keep for the provider, by name. */
class CookieJar {
  readonly cookies = new Map<string, string>()

  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';')[0] ?? ''
      const eq = pair.indexOf('=')
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim())
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  }
}

/**
 * Goes through the provider's pages as a person would (following redirects, typing `login` at the
 * sign-in form, pressing Continue at the consent form) and answers the address the provider
 * finally sends the browser to outside itself: the gateway's return address with code and state.
 */
export async function signInAtProvider(authorizationUrl: string, login: string): Promise<URL> {
  const jar = new CookieJar()
  let url = authorizationUrl
  let form: URLSearchParams | undefined
  const origin = new URL(authorizationUrl).origin
  for (let step = 0; step < 20; step++) {
    const response = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { cookie: jar.header(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: form,
    })
    jar.take(response)
    form = undefined
    const location = response.headers.get('location')
    if (location) {
      const next = new URL(location, url)
      if (next.origin !== origin) return next
      url = next.href
      continue
    }
    const html = await response.text()
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1]
    if (response.status !== 200 || !action)
      throw new Error(`the provider answered ${response.status}: ${html.slice(0, 300)}`)
    url = new URL(action.replaceAll('&amp;', '&'), url).href
    form = new URLSearchParams(
      html.includes('name="login"') ? { prompt: 'login', login, password: 'x' } : { prompt: 'consent' },
    )
  }
  throw new Error('the provider never sent the browser back')
}

export interface GitHubUser {
  id: number
  login: string
  name: string
  emails: { email: string; verified: boolean; primary: boolean }[]
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString()
}

/**
 * A local server speaking GitHub's OAuth web flow and REST API as GitHub documents them
 * (docs.github.com: "Authorizing OAuth apps", "REST API endpoints for users / emails"): the
 * authorize page approves at once as `current.user`; codes are single use and bound to the
 * redirect URI and the PKCE challenge; errors of the token endpoint come as 200 with `error`, as
 * GitHub sends them.
 */
export async function startGitHub(
  t: TestContext,
  { clientId, clientSecret }: { clientId: string; clientSecret: string },
) {
  const current: { user: GitHubUser } = {
    user: { id: 1, login: 'octocat', name: 'The Octocat', emails: [] },
  }
  const codes = new Map<string, { user: GitHubUser; redirectUri: string; challenge: string }>()
  const tokens = new Map<string, GitHubUser>()
  const send = (response: import('node:http').ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  }
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://github.invalid')
    if (request.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const query = url.searchParams
      if (query.get('client_id') !== clientId || query.get('code_challenge_method') !== 'S256') {
        return send(response, 400, { error: 'invalid_request' })
      }
      const code = randomBytes(10).toString('hex')
      const redirectUri = query.get('redirect_uri') ?? ''
      codes.set(code, { user: current.user, redirectUri, challenge: query.get('code_challenge') ?? '' })
      const back = new URL(redirectUri)
      back.searchParams.set('code', code)
      back.searchParams.set('state', query.get('state') ?? '')
      response.writeHead(302, { location: back.href }).end()
      return
    }
    if (request.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const form = new URLSearchParams(await bodyOf(request))
      const grant = codes.get(form.get('code') ?? '')
      codes.delete(form.get('code') ?? '')
      const verifier = form.get('code_verifier') ?? ''
      const challenge = createHash('sha256').update(verifier).digest('base64url')
      if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) {
        return send(response, 200, { error: 'incorrect_client_credentials' })
      }
      if (!grant || grant.redirectUri !== form.get('redirect_uri') || grant.challenge !== challenge) {
        return send(response, 200, { error: 'bad_verification_code' })
      }
      const token = `gho_${randomBytes(16).toString('hex')}`
      tokens.set(token, grant.user)
      return send(response, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' })
    }
    const token = /^(?:Bearer|token) (\S+)$/i.exec(request.headers.authorization ?? '')?.[1]
    const user = token ? tokens.get(token) : undefined
    if (!user) return send(response, 401, { message: 'Requires authentication' })
    if (request.method === 'GET' && url.pathname === '/user') {
      return send(response, 200, { id: user.id, login: user.login, name: user.name, email: null })
    }
    if (request.method === 'GET' && url.pathname === '/user/emails') {
      return send(
        response,
        200,
        user.emails.map((entry) => ({ ...entry, visibility: null })),
      )
    }
    return send(response, 404, { message: 'Not Found' })
  })
  const url = await listenOn(t, server)
  return {
    url,
    current,
    settings: {
      ClientId: clientId,
      ClientSecret: clientSecret,
      AuthorizationUrl: `${url}/login/oauth/authorize`,
      TokenUrl: `${url}/login/oauth/access_token`,
      ApiUrl: url,
    },
  }
}
