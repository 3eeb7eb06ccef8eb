import { ApiError, ContactFlags, hasFlag, type Service } from '@atrium/platform'
import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  ContactKind,
  type ContactKindValue,
  normalizeEmail,
  normalizePhone,
  type Users,
} from '../users/users.repository.ts'
import type { BudgetScope, ChallengeKind, Challenges } from './challenges.repository.ts'
import { clientKey } from './client-key.ts'
import magicLinkPlugin from './magic-link.plugin.ts'
import type { OtpDelivery } from './otp-delivery.ts'
import { validateReturnAddress } from './return-address.ts'
import { type ClientInfo, codeVerify, emailStart, phoneStart } from './sign-in.schema.ts'
import type { SignIn } from './sign-in.ts'

export interface OtpPluginOptions {
  challenges: Challenges
  delivery: OtpDelivery
  signIn: SignIn
  users: Users
  /** PublicOrigin: magic links and redirects are built from it, never from request headers. */
  publicOrigin: string
  maxAttempts: number
}

interface Flow {
  kind: 'email_otp' | 'phone_otp'
  contactKind: ContactKindValue
  startMethod: string
  verifyMethod: string
}

const EMAIL: Flow = {
  kind: 'email_otp',
  contactKind: ContactKind.Email,
  startMethod: 'email_otp_start',
  verifyMethod: 'email_otp',
}
const PHONE: Flow = {
  kind: 'phone_otp',
  contactKind: ContactKind.Phone,
  startMethod: 'phone_otp_start',
  verifyMethod: 'phone_otp',
}

/** What a start refused by each budget says (error.details.scope names the budget). */
const BUDGET_REFUSALS: Record<BudgetScope, string> = {
  target: 'Too many codes were sent to this address in the last hour',
  client: 'Too many sign-in codes were requested from this network in the last hour',
  overall: 'Too many sign-in codes are being requested right now',
}

/**
 * Email OTP with magic link, and phone OTP (spec: "Authentication", OTP methods), under /auth/v1.
 * A start answers the same whether or not the address belongs to a user, so it tells nobody who
 * has an account; the user is created when the code is proven. Proving a code or posting the link's
 * token (magic-link.plugin.ts) marks the contact Verified and signs in with a new session.
 */
export default async function otpPlugin(app: Service, options: OtpPluginOptions) {
  const { challenges, delivery, signIn, users, publicOrigin, maxAttempts } = options

  async function start(
    request: FastifyRequest,
    reply: FastifyReply,
    flow: Flow,
    target: string,
    body: { returnTo?: string; client?: ClientInfo },
    send: (code: string, linkToken: string, verifiedUser: number) => Promise<void>,
  ) {
    const client = body.client ?? {}
    const contact = await users.findContact(flow.contactKind, target)
    const crmId = contact?.crm_id ?? 0
    // Only a verified contact's owner may get the code on another channel: the code verifies the contact.
    const verifiedUser = contact && hasFlag(contact.flags, ContactFlags.Verified) ? contact.crm_id : 0
    const fail = (reason: string) =>
      signIn.record(request, { method: flow.startMethod, success: false, reason, crmId }, client)
    let returnTo: string
    try {
      returnTo = validateReturnAddress(body.returnTo ?? '')
    } catch (error) {
      await fail('invalid_return_address')
      throw error
    }
    const deviceGuid = client.deviceGuid ?? ''
    const from = clientKey(request.ip)
    const started = await challenges.create({ kind: flow.kind, target, client: from, returnTo, deviceGuid })
    if ('retryAfterSeconds' in started) {
      await fail('rate_limited')
      const { scope, retryAfterSeconds } = started
      reply.header('retry-after', String(retryAfterSeconds))
      throw new ApiError('RateLimited', `${BUDGET_REFUSALS[scope]}; retry in ${retryAfterSeconds} s.`, {
        scope,
        retryAfterSeconds,
      })
    }
    const { challenge, code, linkToken } = started
    try {
      await send(code, linkToken, verifiedUser)
    } catch (error) {
      await challenges.discard(challenge)
      await fail('delivery_failed')
      throw error
    }
    await signIn.record(request, { method: flow.startMethod, success: true, crmId }, client)
    return { challengeId: String(challenge.id), expiresAt: challenge.expires }
  }

  async function verify(
    request: FastifyRequest,
    reply: FastifyReply,
    flow: Flow,
    body: { challengeId: string; code: string; client?: ClientInfo },
  ) {
    const check = await challenges.checkCode(Number(body.challengeId), [flow.kind as ChallengeKind], body.code)
    if (!check.ok) {
      const crmId = check.challenge
        ? ((await users.findContact(flow.contactKind, check.challenge.target))?.crm_id ?? 0)
        : 0
      await signIn.record(
        request,
        { method: flow.verifyMethod, success: false, reason: check.reason, crmId },
        body.client,
      )
      if (check.reason === 'wrong_code') {
        const left = maxAttempts - (check.challenge?.attempts ?? maxAttempts)
        throw new ApiError('InvalidCredentials', `The code is wrong; ${left} attempt${left === 1 ? '' : 's'} left.`, {
          attemptsLeft: left,
        })
      }
      if (check.reason === 'attempts_exhausted') {
        throw new ApiError('ChallengeExpired', 'Too many wrong codes: this code no longer works; ask for a new one.', {
          reason: check.reason,
        })
      }
      throw new ApiError('ChallengeExpired')
    }
    const { user } = await users.userForContact(flow.contactKind, check.challenge.target, ContactFlags.Verified)
    const returnTo = check.challenge.return_to || '/'
    return signIn.finish(request, reply, { user, method: flow.verifyMethod, returnTo, client: body.client })
  }

  app.post('/email/start', { schema: emailStart, config: { signIn: true } }, async (request, reply) => {
    const email = normalizeEmail(request.body.email)
    if (!email) throw new ApiError('InvalidRequest', 'body/email is not a valid email address')
    return start(request, reply, EMAIL, email, request.body, (code, linkToken) => {
      const link = `${publicOrigin}/auth/v1/magic?token=${linkToken}`
      return delivery.sendEmailSignIn(request.log, email, code, link)
    })
  })

  app.post('/email/verify', { schema: codeVerify, config: { signIn: true } }, async (request, reply) =>
    verify(request, reply, EMAIL, request.body),
  )

  app.post('/phone/start', { schema: phoneStart, config: { signIn: true } }, async (request, reply) => {
    const phone = normalizePhone(request.body.phone)
    if (!phone) throw new ApiError('InvalidRequest', 'body/phone is not a phone number in E.164 form (+491701234567)')
    return start(request, reply, PHONE, phone, request.body, (code, _link, verifiedUser) =>
      delivery.sendPhoneCode(request.log, phone, code, verifiedUser),
    )
  })

  app.post('/phone/verify', { schema: codeVerify, config: { signIn: true } }, async (request, reply) =>
    verify(request, reply, PHONE, request.body),
  )

  app.register(magicLinkPlugin, { challenges, signIn, users, publicOrigin })
}
