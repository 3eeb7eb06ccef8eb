import { ContactFlags, type Service } from '@atrium/platform'
import type { loadCountryLookup } from '../audit/country.ts'
import loginAuditPlugin from '../audit/login-audit.plugin.ts'
import { createLoginAudit } from '../audit/login-audit.repository.ts'
import type { GatewayConfig } from '../config.ts'
import federationPlugin from '../federation/federation.plugin.ts'
import type { ModuleDirectory } from '../proxy/module-instances.ts'
import type { SessionCookie } from '../sessions/session-cookie.ts'
import sessionsPlugin from '../sessions/sessions.plugin.ts'
import type { GatewayStore } from '../store.ts'
import apiKeysPlugin from './api-keys.plugin.ts'
import appLoginPlugin from './app-login.plugin.ts'
import { createChallenges } from './challenges.repository.ts'
import otpPlugin from './otp.plugin.ts'
import { createOtpDelivery } from './otp-delivery.ts'
import passkeysPlugin from './passkeys.plugin.ts'
import { createSignIn } from './sign-in.ts'
import userKeysPlugin from './user-keys.plugin.ts'

export interface SignInInstallOptions {
  config: GatewayConfig
  store: GatewayStore
  /** The modules' instances: sign-in codes go out through the chat module. */
  modules: ModuleDirectory
  cookie: SessionCookie
  lookupCountry: Awaited<ReturnType<typeof loadCountryLookup>>
}

/**
 * Every way to sign in (codes by email, phone or Telegram, app logins, passkeys, user keys,
 * OAuth and federation), sessions and API keys, and the login audit that records each attempt
 * (docs/gateway.md). Returns the challenges, which the periodic sweep cleans, and the audit, which
 * the operator panel reads.
 */
export function installSignIn(app: Service, { config, store, modules, cookie, lookupCountry }: SignInInstallOptions) {
  const challenges = createChallenges(store.db, store.nextTick, config.Otp, {
    codeKey: config.ServiceSecret,
    now: store.now,
  })
  const loginAudit = createLoginAudit(store.db, store.nextTick, store.now)
  const signIn = createSignIn({ ...store, cookie, loginAudit, lookupCountry })
  const delivery = createOtpDelivery({
    chat: modules.get('chat'),
    serviceSecret: config.ServiceSecret,
    ttlMinutes: Math.round(config.Otp.CodeTtlSeconds / 60),
  })
  const auth = { prefix: '/auth/v1', signIn, users: store.users, sessions: store.sessions, apps: store.apps }
  app.register(otpPlugin, {
    ...auth,
    challenges,
    delivery,
    publicOrigin: config.PublicOrigin,
    maxAttempts: config.Otp.MaxAttempts,
  })
  app.register(appLoginPlugin, { ...auth, absoluteSeconds: config.Sessions.AbsoluteSeconds })
  app.register(sessionsPlugin, { ...auth, cookie })
  app.register(apiKeysPlugin, { ...auth, apiKeys: store.apiKeys })
  app.register(userKeysPlugin, { ...auth, userKeys: store.userKeys, publicOrigin: config.PublicOrigin })
  app.register(passkeysPlugin, {
    ...auth,
    passkeys: store.passkeys,
    publicOrigin: config.PublicOrigin,
    settings: config.WebAuthn,
    decoyKey: config.ServiceSecret,
  })
  app.register(federationPlugin, {
    ...auth,
    federation: store.federation,
    publicOrigin: config.PublicOrigin,
    settings: config.OAuth,
    cookieName: config.Sessions.CookieName,
    now: store.now,
    otherSignInMethods: async (crmId) => {
      const contacts = await store.users.contactsOf(crmId)
      const verified = contacts.filter((contact) => (contact.flags & ContactFlags.Verified) !== 0).length
      return verified + (await store.passkeys.count(crmId)) + (await store.userKeys.count(crmId))
    },
  })
  app.register(loginAuditPlugin, {
    ...auth,
    loginAudit,
    defaultLimit: config.Audit.DefaultLimit,
    maxLimit: config.Audit.MaxLimit,
  })
  return { challenges, loginAudit }
}
