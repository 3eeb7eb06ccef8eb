import { Type } from 'typebox'

function oidcProvider(name: string, issuer: string, issuerHelp: string, scopes = 'openid email profile') {
  return Type.Object(
    {
      Name: Type.String({ default: name, minLength: 1, maxLength: 64, description: 'The name the picker shows.' }),
      Issuer: Type.String({ default: issuer, description: issuerHelp }),
      ClientId: Type.String({
        default: '',
        description: 'The client id registered at the provider; the method is on only when it is set.',
      }),
      ClientSecret: Type.String({ default: '', description: 'The client secret registered at the provider.' }),
      Scopes: Type.String({ default: scopes, description: 'Space-separated scopes asked for.' }),
    },
    { default: {}, additionalProperties: false },
  )
}

/**
 * The OAuth sign-in methods' settings (docs/gateway.md, "OAuth and federated sign-in"): each
 * provider is on once its client id is set. The redirect URI to register at every provider is
 * PublicOrigin + /auth/v1/federated/return. Spread into the gateway's settings.
 */
export const oauthSettings = {
  OAuth: Type.Object(
    {
      FlowTtlSeconds: Type.Integer({
        default: 600,
        minimum: 30,
        maximum: 3600,
        description: 'How long a started sign-in at a provider may take before its return is refused.',
      }),
      Oidc: oidcProvider(
        'OpenID Connect',
        '',
        'The issuer URL of any OpenID Connect provider (Keycloak, authentik, Zitadel…); its /.well-known/openid-configuration names the endpoints.',
      ),
      Google: oidcProvider('Google', 'https://accounts.google.com', 'Google’s issuer.'),
      Microsoft: oidcProvider(
        'Microsoft',
        '',
        'The issuer of your Entra ID tenant: https://login.microsoftonline.com/<tenant id>/v2.0 (required with ClientId).',
      ),
      Apple: oidcProvider(
        'Apple',
        'https://appleid.apple.com',
        'Apple’s issuer. ClientSecret is the signed JWT Apple’s documentation describes (renew it before it expires).',
        // Apple sends name and email only to a form_post return, which is not supported yet.
        'openid',
      ),
      GitLab: oidcProvider('GitLab', 'https://gitlab.com', 'GitLab’s issuer (or your own GitLab’s address).'),
      GitHub: Type.Object(
        {
          Name: Type.String({
            default: 'GitHub',
            minLength: 1,
            maxLength: 64,
            description: 'The name the picker shows.',
          }),
          ClientId: Type.String({ default: '', description: 'The OAuth app’s client id; the method is on when set.' }),
          ClientSecret: Type.String({ default: '', description: 'The OAuth app’s client secret.' }),
          Scopes: Type.String({ default: 'read:user user:email', description: 'Space-separated scopes asked for.' }),
          AuthorizationUrl: Type.String({
            default: 'https://github.com/login/oauth/authorize',
            description: 'GitHub’s authorization endpoint (GitHub Enterprise: your server’s).',
          }),
          TokenUrl: Type.String({
            default: 'https://github.com/login/oauth/access_token',
            description: 'GitHub’s token endpoint.',
          }),
          ApiUrl: Type.String({
            default: 'https://api.github.com',
            description: 'GitHub’s REST API, for GET /user and GET /user/emails.',
          }),
        },
        { default: {}, additionalProperties: false },
      ),
      Telegram: Type.Object(
        {
          Name: Type.String({
            default: 'Telegram',
            minLength: 1,
            maxLength: 64,
            description: 'The name the picker shows.',
          }),
          BotName: Type.String({
            default: '',
            description:
              'The bot’s username the Login Widget names (without @); the method is on when it and BotToken are set.',
          }),
          BotToken: Type.String({
            default: '',
            description: 'The bot’s token from @BotFather; it signs the widget data.',
          }),
          MaxAgeSeconds: Type.Integer({
            default: 86400,
            minimum: 10,
            description: 'Oldest widget data (its auth_date) accepted.',
          }),
        },
        { default: {}, additionalProperties: false },
      ),
    },
    { default: {}, additionalProperties: false },
  ),
}

/** Why the OAuth settings cannot work, one line per problem. */
export function checkOAuth(settings: { OAuth: Record<string, unknown> }): string[] {
  const problems: string[] = []
  for (const key of ['Oidc', 'Google', 'Microsoft', 'Apple', 'GitLab']) {
    const entry = settings.OAuth[key] as { ClientId: string; Issuer: string }
    if (entry.ClientId === '') continue
    if (entry.Issuer === '') problems.push(`OAuth.${key}.Issuer: required when OAuth.${key}.ClientId is set`)
    else if (!isProviderUrl(entry.Issuer)) {
      problems.push(`OAuth.${key}.Issuer: must be an https URL (http only on a loopback address)`)
    }
  }
  const github = settings.OAuth.GitHub as Record<string, string>
  if (github.ClientId !== '') {
    for (const name of ['AuthorizationUrl', 'TokenUrl', 'ApiUrl']) {
      if (!isProviderUrl(github[name] ?? '')) {
        problems.push(`OAuth.GitHub.${name}: must be an https URL (http only on a loopback address)`)
      }
    }
  }
  const telegram = settings.OAuth.Telegram as { BotName: string; BotToken: string }
  if ((telegram.BotName === '') !== (telegram.BotToken === '')) {
    problems.push('OAuth.Telegram: BotName and BotToken are set together')
  }
  return problems
}

/** An https URL, or http on a loopback address (a provider on this machine). */
export function isProviderUrl(text: string): boolean {
  const url = URL.parse(text)
  if (!url || url.username || url.password) return false
  return (
    url.protocol === 'https:' ||
    (url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname))
  )
}
