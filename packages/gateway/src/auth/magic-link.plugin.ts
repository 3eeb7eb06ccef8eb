import { ApiError, ContactFlags, type Service } from '@atrium/platform'
import type { FastifyRequest } from 'fastify'
import { ContactKind, type Users } from '../users/users.repository.ts'
import type { Challenges } from './challenges.repository.ts'
import { expiredLinkPage, magicLinkPage, sendPage } from './magic-link-page.ts'
import { returnUrl } from './return-address.ts'
import { magicLinkSignIn, magicLinkPage as pageSchema } from './sign-in.schema.ts'
import type { SignIn } from './sign-in.ts'

export interface MagicLinkPluginOptions {
  challenges: Challenges
  signIn: SignIn
  users: Users
  /** PublicOrigin: the form post's redirect is built from it, never from request headers. */
  publicOrigin: string
}

const FORM = 'application/x-www-form-urlencoded'
/** A form post carries only the token (at most 128 characters). */
const FORM_BODY_LIMIT = 1024

function isFormPost(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').toLowerCase().startsWith(FORM)
}

/**
 * The magic link (spec: "Authentication", email OTP). Opening the mailed link (GET) only answers a
 * page, so mail scanners and prefetchers that open it burn nothing; the page posts the token with
 * the login audit's client fields (JSON), or without JavaScript as a form, and that POST consumes
 * the token and signs in. Registered inside the OTP plugin, so the form body parser exists for
 * these two routes only.
 */
export default async function magicLinkPlugin(app: Service, options: MagicLinkPluginOptions) {
  const { challenges, signIn, users, publicOrigin } = options
  const action = `${app.prefix}/magic`

  app.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, function parseForm(_, body, done) {
    // Fields become plain properties; the body schema refuses anything but `token`.
    done(null, Object.fromEntries(new URLSearchParams(body as string)))
  })

  // The token is in the query: logLevel warn keeps the request line (with the URL) out of the log.
  app.get('/magic', { schema: pageSchema, logLevel: 'warn', config: { envelope: false } }, async (request, reply) =>
    sendPage(reply, magicLinkPage(request.query.token, action)),
  )

  app.post('/magic', { schema: magicLinkSignIn, config: { signIn: true } }, async (request, reply) => {
    const form = isFormPost(request)
    const { token, client } = request.body
    const challenge = await challenges.useLink(token)
    if (!challenge) {
      await signIn.record(request, { method: 'magic_link', success: false, reason: 'expired' }, client)
      if (form) return sendPage(reply.code(401), expiredLinkPage())
      throw new ApiError('ChallengeExpired', 'This sign-in link expired or was already used; ask for a new one.')
    }
    const { user } = await users.userForContact(ContactKind.Email, challenge.target, ContactFlags.Verified)
    const returnTo = challenge.return_to || '/'
    const signedIn = await signIn.finish(request, reply, { user, method: 'magic_link', returnTo, client })
    if (form) return reply.redirect(returnUrl(publicOrigin, returnTo), 303)
    return signedIn
  })
}
