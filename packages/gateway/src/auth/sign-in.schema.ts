import { ErrorEnvelopeSchema } from '@atrium/platform'
import { type Static, Type } from 'typebox'
import { UserView } from '../users/user-view.ts'
import { MAX_RETURN_ADDRESS_LENGTH } from './return-address.ts'

/** What the browser tells about itself, kept in the login audit log (spec: "Platform rules"). */
export const Client = Type.Object(
  {
    screen: Type.Optional(Type.String({ maxLength: 32, description: 'Screen resolution, e.g. `1920x1080`.' })),
    deviceGuid: Type.Optional(
      Type.String({ maxLength: 64, pattern: '^[A-Za-z0-9._:-]*$', description: 'Stable id of the device.' }),
    ),
    timezone: Type.Optional(Type.String({ maxLength: 64, description: 'IANA time zone, e.g. `Europe/Berlin`.' })),
    language: Type.Optional(Type.String({ maxLength: 35, description: 'Browser language, e.g. `de-DE`.' })),
  },
  { additionalProperties: false },
)
export type ClientInfo = Static<typeof Client>

export const ReturnTo = Type.String({
  maxLength: MAX_RETURN_ADDRESS_LENGTH,
  description: 'Path on this site to return to after sign-in, e.g. `/chat/`; default `/`.',
})
const ChallengeId = Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: 'Id from the start call.' })
const Code = Type.String({ pattern: '^[0-9]{6}$', description: 'The six-digit code that was sent.' })

const Started = Type.Object({
  challengeId: ChallengeId,
  expiresAt: Type.Integer({ description: 'When the code and link stop working, epoch ms.' }),
})

/** The result of every completed sign-in; the session cookie is set on the same response. */
export const SignedIn = Type.Object({
  user: UserView,
  csrf: Type.String({ description: 'Send it in X-CSRF-Token on POST/PUT/PATCH/DELETE with the cookie.' }),
  returnTo: Type.String({ description: 'The validated path to go to.' }),
})

/** OpenAPI security of the sign-in routes: they take no credentials. */
const PUBLIC: [] = []

const verifyBody = Type.Object(
  { challengeId: ChallengeId, code: Code, client: Type.Optional(Client) },
  { additionalProperties: false },
)

/** POST /auth/v1/email/start. */
export const emailStart = {
  security: PUBLIC,
  body: Type.Object(
    { email: Type.String({ maxLength: 254 }), returnTo: Type.Optional(ReturnTo), client: Type.Optional(Client) },
    { additionalProperties: false },
  ),
  response: { 200: Started },
}

/** POST /auth/v1/phone/start. */
export const phoneStart = {
  security: PUBLIC,
  body: Type.Object(
    {
      phone: Type.String({ maxLength: 32, description: 'E.164, e.g. `+491701234567`.' }),
      returnTo: Type.Optional(ReturnTo),
      client: Type.Optional(Client),
    },
    { additionalProperties: false },
  ),
  response: { 200: Started },
}

/** POST /auth/v1/email/verify and /auth/v1/phone/verify. */
export const codeVerify = { security: PUBLIC, body: verifyBody, response: { 200: SignedIn } }

/** The token of a magic link: base64url, so it can be put into a page without breaking out. */
const MagicToken = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: '^[A-Za-z0-9_-]+$',
  description: 'The token from the mailed link.',
})

/** GET /auth/v1/magic: the page that signs in by posting the token; opening it consumes nothing. */
export const magicLinkPage = {
  security: PUBLIC,
  querystring: Type.Object({ token: MagicToken }, { additionalProperties: false }),
  response: {
    200: {
      description:
        'An HTML page whose script posts the token with the client fields to POST /auth/v1/magic; without JavaScript it shows a Sign in button that posts the form.',
      content: { 'text/html': { schema: Type.String() } },
    },
  },
}

/** POST /auth/v1/magic: consumes the link's token and signs in. */
export const magicLinkSignIn = {
  security: PUBLIC,
  consumes: ['application/json', 'application/x-www-form-urlencoded'],
  body: Type.Object({ token: MagicToken, client: Type.Optional(Client) }, { additionalProperties: false }),
  response: {
    200: SignedIn,
    303: Type.Null({
      description:
        'Form post (application/x-www-form-urlencoded, `token` only): signed in, the session cookie is set and Location is the return address on PublicOrigin.',
      headers: { location: Type.String() },
    }),
    401: {
      description:
        'An expired or used link: ChallengeExpired in the error envelope, or for a form post an HTML page saying so.',
      content: { 'application/json': { schema: ErrorEnvelopeSchema }, 'text/html': { schema: Type.String() } },
    },
  },
}
