import { ApiError, type Service, shownName } from '@atrium/platform'
import { Type } from 'typebox'
import type { CallerResolver } from '../caller.ts'
import { MemberId } from '../messages/messages.schema.ts'
import type { Store, Unit } from '../store.ts'
import type { ProfileInput } from './profiles.repository.ts'

export interface ProfilesPluginOptions {
  store: Store
  resolveCaller: CallerResolver
}

// Names are shown as text; control characters would let a name break the layout of a chat list.
const NAME_PATTERN = '^[^\\u0000-\\u001f\\u007f]+$'
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: NAME_PATTERN })
/** set_profiles also takes '' for a person who has chosen no display name yet. */
const OptionalName = Type.Union([Type.Literal(''), Type.String({ maxLength: 100, pattern: NAME_PATTERN })])
const Profile = Type.Object({
  member: Type.String(),
  name: Type.String({ description: 'The name others see (docs/people.md): the display name or "User 1234".' }),
})
/** Most profiles one set_profiles call stores. */
export const MAX_PROFILES_PER_CALL = 500
/** Most ids one get_profiles call asks for. */
const MAX_LOOKUP = 200

function displayName(name: string): string {
  const trimmed = name.trim()
  if (trimmed === '') throw new ApiError('InvalidRequest', 'a name is not blank')
  return trimmed
}

/**
 * Stores names in one transaction and tells everyone who shares a chat with a renamed person:
 * a ProfileChanged event in each of that person's chats (members at read time, as every chat-wide
 * event). Unchanged names record nothing, so the gateway may send a profile again safely.
 */
async function storeProfiles(
  store: Store,
  profiles: ProfileInput[],
  scopes: Array<{ member: number; scopes: string[] }> = [],
): Promise<void> {
  await store.transact(async (unit: Unit) => {
    const changed = await unit.profiles.setNames(profiles, store.nextTick())
    await unit.profiles.setScopes(scopes)
    for (const { member, name } of changed) {
      for (const membership of await unit.members.memberships(member)) {
        await unit.emit({
          chat_id: membership.chat_id,
          type: 'ProfileChanged',
          data: { chat_id: String(membership.chat_id), member: String(member), name: shownName(member, name) },
        })
      }
    }
  })
}

const getProfiles = {
  querystring: Type.Object(
    {
      members: Type.String({
        pattern: '^[1-9][0-9]{0,15}(,[1-9][0-9]{0,15})*$',
        description: `Comma-separated member ids, at most ${MAX_LOOKUP}.`,
      }),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ profiles: Type.Array(Profile) }) },
}

/** update_profile and get_profiles (/msg/v1): a member names themself; names of people one shares a chat with. */
export async function profilesPlugin(app: Service, { store, resolveCaller }: ProfilesPluginOptions) {
  app.post(
    '/update_profile',
    { schema: { body: Type.Object({ name: Name }, { additionalProperties: false }), response: { 200: Profile } } },
    async (request) => {
      const caller = await resolveCaller(request)
      const name = displayName(request.body.name)
      await storeProfiles(store, [{ member: caller.member, name }])
      return { member: String(caller.member), name }
    },
  )

  // Only people who share a chat with the caller: an id alone must not reveal whose it is.
  app.get('/get_profiles', { schema: getProfiles }, async (request) => {
    const caller = await resolveCaller(request)
    const ids = [...new Set(request.query.members.split(',').map(Number))]
    if (ids.length > MAX_LOOKUP) throw new ApiError('InvalidRequest', `at most ${MAX_LOOKUP} members per call`)
    const visible = [...(await store.members.sharingAChat(caller.member, ids))]
    const names = await store.profiles.names(visible)
    return {
      profiles: visible.map((member) => ({ member: String(member), name: shownName(member, names.get(member)) })),
    }
  })
}

/** A scope as the gateway grants it (docs/people.md, "Scopes"). */
const Scope = Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,64}$' })
const setProfiles = {
  body: Type.Object(
    {
      profiles: Type.Array(
        Type.Object(
          {
            member: MemberId,
            name: OptionalName,
            scopes: Type.Optional(
              Type.Array(Scope, {
                maxItems: 50,
                description:
                  'The person’s scopes at the gateway; the Telegram widgets check them (docs/telegram-widgets.md). Omitted: keep the stored ones.',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        {
          minItems: 1,
          maxItems: MAX_PROFILES_PER_CALL,
        },
      ),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ stored: Type.Integer() }) },
}

/** set_profile and set_profiles (/private/v1): the gateway or CRM registers people and their display names. */
export async function internalProfilesPlugin(app: Service, { store }: Pick<ProfilesPluginOptions, 'store'>) {
  app.post(
    '/set_profile',
    {
      schema: {
        body: Type.Object({ member: MemberId, name: Name }, { additionalProperties: false }),
        response: { 200: Profile },
      },
    },
    async (request) => {
      const name = displayName(request.body.name)
      await storeProfiles(store, [{ member: Number(request.body.member), name }])
      return { member: request.body.member, name }
    },
  )

  app.post('/set_profiles', { schema: setProfiles }, async (request) => {
    const latest = new Map<number, string>()
    const scopes = new Map<number, string[]>()
    for (const profile of request.body.profiles) {
      latest.set(Number(profile.member), profile.name.trim())
      if (profile.scopes) scopes.set(Number(profile.member), profile.scopes)
    }
    const profiles = [...latest].map(([member, name]) => ({ member, name }))
    await storeProfiles(
      store,
      profiles,
      [...scopes].map(([member, granted]) => ({ member, scopes: granted })),
    )
    return { stored: profiles.length }
  })
}
