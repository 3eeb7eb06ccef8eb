import { ApiError, DISPLAY_NAME_MAX, DISPLAY_NAME_PATTERN, type Service, shownName } from '@atrium/platform'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Caller } from '../auth/caller.ts'
import { createFixedWindow } from '../rate-limit/fixed-window.ts'
import { ContactKind, normalizeEmail, normalizePhone, type User, type Users } from '../users/users.repository.ts'

export interface PeoplePluginOptions {
  users: Users
  now: () => number
}

/** Shortest query; shorter ones would list most of the project a letter at a time. */
export const MIN_QUERY = 2
/** Most people one search returns. */
export const SEARCH_LIMIT = 20
/** Searches one user may make per minute. */
export const SEARCHES_PER_MINUTE = 30

const Person = Type.Object({
  id: Type.String({ description: 'The CRM id, the member id chat operations take.' }),
  name: Type.String({ description: 'The name others see (docs/people.md).' }),
  matched: Type.Union([Type.Literal('name'), Type.Literal('email'), Type.Literal('phone')], {
    description: 'What the query matched; a contact matches only when typed in full.',
  }),
})

const searchPeople = {
  querystring: Type.Object(
    { q: Type.String({ maxLength: 254, description: `At least ${MIN_QUERY} characters.` }) },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ people: Type.Array(Person) }) },
}

const setProfile = {
  body: Type.Object(
    { name: Type.String({ minLength: 1, maxLength: DISPLAY_NAME_MAX, pattern: DISPLAY_NAME_PATTERN }) },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ crmId: Type.String(), name: Type.String() }) },
}

/** Only a person signed in by session searches: not guests (no session), not apps or keys. */
function requirePerson(caller: Caller, what: string): number {
  if (caller.keyType === '') throw new ApiError('SessionRequired', `Sign in to ${what}.`)
  if (caller.keyType !== 'session' || caller.crmId === 0) {
    throw new ApiError('Forbidden', `Only a signed-in person may ${what}.`)
  }
  return caller.crmId
}

function toPerson(user: User, matched: 'name' | 'email' | 'phone') {
  return { id: String(user.crm_id), name: shownName(user.crm_id, user.name), matched }
}

/**
 * People search and the caller's own display name under /auth/v1 (docs/people.md). The search
 * finds display names by any part; an email address or phone number finds its owner only when
 * typed in full, and contacts never appear in results.
 */
export default async function peoplePlugin(app: Service, { users, now }: PeoplePluginOptions) {
  const searches = createFixedWindow<number>(SEARCHES_PER_MINUTE, 60, now)

  // Credentials first, before the query is validated: an anonymous caller learns only to sign in.
  const searcher = {
    preValidation: async (request: FastifyRequest) => void requirePerson(request.caller, 'find people'),
  }
  const namer = {
    preValidation: async (request: FastifyRequest) => void requirePerson(request.caller, 'change a display name'),
  }

  app.get('/people', { schema: searchPeople, ...searcher }, async (request, reply) => {
    const me = requirePerson(request.caller, 'find people')
    const q = request.query.q.trim()
    if ([...q].length < MIN_QUERY) throw new ApiError('InvalidRequest', `Type at least ${MIN_QUERY} characters.`)
    const wait = searches.take(me)
    if (wait > 0) {
      reply.header('retry-after', String(wait))
      throw new ApiError('RateLimited', `Too many searches; try again in ${wait} seconds.`)
    }
    if (q.includes('@')) {
      const email = normalizeEmail(q)
      return { people: email ? await byContact(ContactKind.Email, email, me, 'email') : [] }
    }
    const phone = /^[+0(]/.test(q) ? normalizePhone(q) : undefined
    if (phone) return { people: await byContact(ContactKind.Phone, phone, me, 'phone') }
    const found = await users.findByName(q, SEARCH_LIMIT, me)
    return { people: found.map((user) => toPerson(user, 'name')) }
  })

  async function byContact(kind: 1 | 2, value: string, me: number, matched: 'email' | 'phone') {
    const contact = await users.findContact(kind, value)
    if (!contact || contact.crm_id === me) return []
    const user = await users.get(contact.crm_id)
    return user ? [toPerson(user, matched)] : []
  }

  app.post('/profile', { schema: setProfile, ...namer }, async (request) => {
    const me = requirePerson(request.caller, 'change a display name')
    const name = request.body.name.trim()
    if (name === '') throw new ApiError('InvalidRequest', 'A display name is not blank.')
    await users.setName(me, name)
    return { crmId: String(me), name }
  })
}
