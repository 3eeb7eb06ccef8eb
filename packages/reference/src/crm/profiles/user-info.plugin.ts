import { ApiError, type Service, shownName } from '@atrium/platform'
import { Type } from 'typebox'
import { requireCaller } from '../caller.ts'
import type { CrmStore } from '../store.ts'
import type { Profile } from './profiles.repository.ts'
import { CrmId, UserInfo } from './profiles.schema.ts'

export interface UserInfoPluginOptions {
  store: CrmStore
}

const getUserInfo = {
  summary: 'A person’s profile; contacts only for themself, a service key or the crm:read scope',
  querystring: Type.Object(
    { crm_id: Type.Optional({ ...CrmId, description: 'Whose profile; the caller (X-Crm) when omitted.' }) },
    { additionalProperties: false },
  ),
  response: { 200: UserInfo },
}

/** Shapes a profile for the API; `withContacts` false leaves the contacts out (they are private). */
function toUserInfo(profile: Profile, withContacts: boolean): UserInfo {
  return {
    crm_id: String(profile.crm_id),
    name: shownName(profile.crm_id, profile.name),
    contacts: withContacts ? profile.contacts : [],
    created: new Date(profile.created).toISOString(),
  }
}

/** GET /crm/v1/user_info: a profile as the caller may see it (docs/crm.md, "Who sees what"). */
export default async function userInfoPlugin(app: Service, { store }: UserInfoPluginOptions) {
  app.get('/user_info', { schema: getUserInfo }, async (request) => {
    const caller = requireCaller(request)
    const asked = request.query.crm_id
    const crmId = asked === undefined ? caller.crmId : Number(asked)
    if (crmId === 0) throw new ApiError('InvalidRequest', 'crm_id is needed when no user is signed in')
    if (!Number.isSafeInteger(crmId)) throw new ApiError('InvalidRequest', `crm_id ${asked} is not a CRM id`)
    const profile = await store.profiles.find(crmId)
    if (!profile) throw new ApiError('NotFound', `no profile ${crmId}`)
    return toUserInfo(profile, caller.readsAll || crmId === caller.crmId)
  })
}
