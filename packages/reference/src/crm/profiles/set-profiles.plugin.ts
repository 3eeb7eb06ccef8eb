import { ApiError, type Service } from '@atrium/platform'
import { Type } from 'typebox'
import type { CrmStore } from '../store.ts'
import { type Profile, sortContacts } from './profiles.repository.ts'
import { type Contact, MAX_PROFILES_PER_CALL, ProfileInput } from './profiles.schema.ts'

export interface SetProfilesPluginOptions {
  store: CrmStore
  now?: () => number
}

const setProfiles = {
  summary: 'The gateway registers people: names, contacts and when they were created',
  body: Type.Object(
    { profiles: Type.Array(ProfileInput, { minItems: 1, maxItems: MAX_PROFILES_PER_CALL }) },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      stored: Type.Integer({ description: 'Distinct people in the call.' }),
      changed: Type.Integer({ description: 'People whose stored profile changed; 0 when the call repeats one.' }),
    }),
  },
}

function crmIdOf(member: string): number {
  const id = Number(member)
  if (!Number.isSafeInteger(id)) throw new ApiError('InvalidRequest', `member ${member} is not a CRM id`)
  return id
}

/** Epoch milliseconds of an ISO time the schema let through, refusing dates that do not exist (2026-02-30). */
function timeOf(member: string, iso: string): number {
  const ms = Date.parse(iso)
  if (!Number.isFinite(ms) || ms < 0 || new Date(ms).toISOString().slice(0, 19) !== iso.slice(0, 19)) {
    throw new ApiError('InvalidRequest', `member ${member}: created ${iso} is not a time`)
  }
  return ms
}

function checkContacts(member: string, contacts: Contact[]): Contact[] {
  const seen = new Set<string>()
  for (const { kind, value } of contacts) {
    const key = `${kind}:${value}`
    if (seen.has(key)) throw new ApiError('InvalidRequest', `member ${member} lists the contact ${key} twice`)
    seen.add(key)
  }
  return sortContacts(contacts)
}

function sameProfile(a: Profile, b: Profile): boolean {
  return (
    a.name === b.name &&
    a.created === b.created &&
    a.contacts.length === b.contacts.length &&
    a.contacts.every(
      (contact, i) =>
        contact.kind === b.contacts[i]!.kind &&
        contact.value === b.contacts[i]!.value &&
        contact.verified === b.contacts[i]!.verified,
    )
  )
}

/**
 * POST /private/v1/set_profiles: upserts people as the gateway describes them, all in one
 * transaction (a batch is stored whole or not at all). The last entry of a person in a call wins;
 * omitted or null `created` and `contacts` keep what is stored. A profile sent again unchanged
 * keeps its timetick_update, so the gateway may repeat a batch safely.
 */
export default async function setProfilesPlugin(app: Service, { store, now = Date.now }: SetProfilesPluginOptions) {
  app.post('/set_profiles', { schema: setProfiles }, async (request) => {
    const latest = new Map<number, { name: string; created?: number; contacts?: Contact[] }>()
    // Everything is checked before the transaction starts: a refused batch writes nothing.
    for (const input of request.body.profiles) {
      latest.set(crmIdOf(input.member), {
        name: input.name.trim(),
        created: input.created == null ? undefined : timeOf(input.member, input.created),
        contacts: input.contacts == null ? undefined : checkContacts(input.member, input.contacts),
      })
    }
    const changed = await store.transact(async (unit) => {
      const stored = await unit.profiles.findMany([...latest.keys()])
      const changes: Profile[] = []
      for (const [crmId, input] of latest) {
        const before = stored.get(crmId)
        const next: Profile = {
          crm_id: crmId,
          name: input.name,
          // A person first seen without `created` is dated when the CRM learned of them.
          created: input.created ?? before?.created ?? now(),
          contacts: input.contacts ?? before?.contacts ?? [],
          timetick_update: before?.timetick_update ?? 0,
        }
        if (before && sameProfile(before, next)) continue
        changes.push({ ...next, timetick_update: store.nextTick() })
      }
      await unit.profiles.saveMany(changes)
      return changes.length
    })
    return { stored: latest.size, changed }
  })
}
