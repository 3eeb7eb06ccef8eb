import { ApiError, type Service } from '@atrium/platform'
import { Type } from 'typebox'
import type { CallerResolver } from '../caller.ts'
import { MemberId } from '../messages/messages.schema.ts'
import type { Store } from '../store.ts'

export interface ProfilesPluginOptions {
  store: Store
  resolveCaller: CallerResolver
}

// Names are shown as text; control characters would let a name break the layout of a chat list.
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]+$' })
const Profile = Type.Object({ member: Type.String(), name: Type.String() })

function displayName(name: string): string {
  const trimmed = name.trim()
  if (trimmed === '') throw new ApiError('InvalidRequest', 'a name is not blank')
  return trimmed
}

/** update_profile (/msg/v1): a member names themself. */
export async function profilesPlugin(app: Service, { store, resolveCaller }: ProfilesPluginOptions) {
  app.post(
    '/update_profile',
    { schema: { body: Type.Object({ name: Name }, { additionalProperties: false }), response: { 200: Profile } } },
    async (request) => {
      const caller = await resolveCaller(request)
      const name = displayName(request.body.name)
      await store.profiles.setName(caller.member, name, store.nextTick())
      return { member: String(caller.member), name }
    },
  )
}

/** set_profile (/private/v1): the gateway or CRM sets a user's display name. */
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
      await store.profiles.setName(Number(request.body.member), name, store.nextTick())
      return { member: request.body.member, name }
    },
  )
}
