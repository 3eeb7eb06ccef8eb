import type { ClientInfo } from '../api/auth-api.ts'

/** What a browser knows about itself; read from `screen`, `Intl` and `navigator` by `browserEnvironment`. */
export interface BrowserEnvironment {
  screenWidth: number
  screenHeight: number
  timezone: string
  language: string
}

// The gateway's bounds on each field (Client in its sign-in schema): a longer value would refuse the attempt.
const MAX = { screen: 32, timezone: 64, language: 35 }

/**
 * The audit fields sent with every sign-in attempt (spec: the login audit records screen
 * resolution, device GUID, timezone and browser language), within the gateway's bounds.
 */
export function clientInfo(environment: BrowserEnvironment, deviceGuid: string): ClientInfo {
  const info: ClientInfo = { deviceGuid }
  const { screenWidth, screenHeight } = environment
  if (screenWidth > 0 && screenHeight > 0) info.screen = `${Math.round(screenWidth)}x${Math.round(screenHeight)}`
  if (environment.timezone && environment.timezone.length <= MAX.timezone) info.timezone = environment.timezone
  if (environment.language && environment.language.length <= MAX.language) info.language = environment.language
  return info
}

/** This browser's environment. */
export function browserEnvironment(): BrowserEnvironment {
  let timezone = ''
  try {
    timezone = Intl.DateTimeFormat().resolvedOptions().timeZone ?? ''
  } catch {
    // Older engines without time zone support: the gateway records none.
  }
  return {
    screenWidth: globalThis.screen?.width ?? 0,
    screenHeight: globalThis.screen?.height ?? 0,
    timezone,
    language: globalThis.navigator?.language ?? '',
  }
}
