import type { AuthApi, Challenge, ClientInfo, SignedIn } from '../api/auth-api.ts'

/** One one-time-code sign-in (spec: "Authentication", OTP methods): where the code goes and how it is proven. */
export interface OtpFlow {
  id: 'email' | 'phone'
  tab: string
  label: string
  hint: string
  /** What to do when the server refuses the address or number as malformed. */
  invalid: string
  /** What the code step says was sent. */
  sent: (target: string) => string
  start: (auth: AuthApi, target: string, returnTo: string, info: ClientInfo) => Promise<Challenge>
  verify: (auth: AuthApi, challengeId: string, code: string, info: ClientInfo) => Promise<SignedIn>
}

/** Email OTP: a six-digit code and a magic link in one mail. */
export const EMAIL_FLOW: OtpFlow = {
  id: 'email',
  tab: 'Email',
  label: 'Email address',
  hint: 'We email you a sign-in code and a link.',
  invalid: 'That is not an email address we can send to. Enter it like name@example.com.',
  sent: (target) => `We sent a 6-digit code and a sign-in link to ${target}. Enter the code, or open the link.`,
  start: (auth, target, returnTo, info) => auth.startEmail(target, returnTo, info),
  verify: (auth, challengeId, code, info) => auth.verifyEmail(challengeId, code, info),
}

/** Phone OTP: a six-digit code by SMS (or the channel the chat module picks). */
export const PHONE_FLOW: OtpFlow = {
  id: 'phone',
  tab: 'Phone',
  label: 'Phone number',
  hint: 'In international form, e.g. +491701234567. We send you a sign-in code.',
  invalid: 'Enter the number in international form: a + and the country code, then the number, e.g. +491701234567.',
  sent: (target) => `We sent a 6-digit code to ${target}.`,
  start: (auth, target, returnTo, info) => auth.startPhone(target, returnTo, info),
  verify: (auth, challengeId, code, info) => auth.verifyPhone(challengeId, code, info),
}
