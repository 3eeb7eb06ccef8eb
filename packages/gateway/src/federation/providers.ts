import type { GatewayConfig } from '../config.ts'
import type { FederationPartner } from './federation.repository.ts'

type OAuthConfig = GatewayConfig['OAuth']

/** How a provider signs people in: OpenID Connect, GitHub's OAuth 2 and REST API, or Telegram's widget. */
export type ProviderKind = 'oidc' | 'github' | 'telegram'

/** One entry of the catalogue, with what the gateway needs to run its flow (secrets never leave the gateway). */
export interface Provider {
  /** The catalogue id: `oidc`, `google`, `microsoft`, `apple`, `gitlab`, `github`, `telegram` or a partner's slug. */
  id: string
  name: string
  /** A logo URL for the picker; '' for the built-in methods (the picker shows the name). */
  logo: string
  kind: ProviderKind
  issuer: string
  clientId: string
  clientSecret: string
  scopes: string
  /** Partners are added at run time; their id may never shadow a configured method. */
  partner: boolean
}

/** Ids of the configured methods, in the picker's order; a partner's slug may not be one of them. */
export const BUILT_IN_IDS = ['oidc', 'google', 'microsoft', 'apple', 'gitlab', 'github', 'telegram'] as const

const OIDC_PRESETS = [
  ['oidc', 'Oidc'],
  ['google', 'Google'],
  ['microsoft', 'Microsoft'],
  ['apple', 'Apple'],
  ['gitlab', 'GitLab'],
] as const

/** The methods the settings turn on: a provider is on once its client id (Telegram: bot) and issuer are set. */
export function configuredProviders(settings: OAuthConfig): Provider[] {
  const providers: Provider[] = []
  for (const [id, key] of OIDC_PRESETS) {
    const entry = settings[key]
    if (entry.ClientId === '' || entry.Issuer === '') continue
    providers.push({
      id,
      name: entry.Name,
      logo: '',
      kind: 'oidc',
      issuer: entry.Issuer,
      clientId: entry.ClientId,
      clientSecret: entry.ClientSecret,
      scopes: entry.Scopes,
      partner: false,
    })
  }
  const github = settings.GitHub
  if (github.ClientId !== '') {
    providers.push({
      id: 'github',
      name: github.Name,
      logo: '',
      kind: 'github',
      issuer: '',
      clientId: github.ClientId,
      clientSecret: github.ClientSecret,
      scopes: github.Scopes,
      partner: false,
    })
  }
  const telegram = settings.Telegram
  if (telegram.BotName !== '' && telegram.BotToken !== '') {
    providers.push({
      id: 'telegram',
      name: telegram.Name,
      logo: '',
      kind: 'telegram',
      issuer: '',
      clientId: telegram.BotName,
      clientSecret: telegram.BotToken,
      scopes: '',
      partner: false,
    })
  }
  return providers
}

export function partnerProvider(partner: FederationPartner): Provider {
  return {
    id: partner.slug,
    name: partner.name,
    logo: partner.logo_url,
    kind: 'oidc',
    issuer: partner.issuer,
    clientId: partner.client_id,
    clientSecret: partner.client_secret,
    scopes: partner.scopes,
    partner: true,
  }
}
