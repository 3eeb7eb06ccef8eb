import { ContactFlags, DISPLAY_NAME_PATTERN } from '@atrium/platform'
import { parseScopes } from '../auth/caller.ts'
import type { Federation } from '../federation/federation.repository.ts'
import type { ModuleInstances } from '../proxy/module-instances.ts'
import { type Contact, ContactKind, type User, type Users } from '../users/users.repository.ts'
import type { ProfileTarget } from './profile-sync.ts'

/** The provider id of the Telegram login (federation/providers.ts): its subject is the Telegram user id. */
const TELEGRAM_PROVIDER = 'telegram'
/** Most contacts the CRM keeps per person; verified ones go first when someone has more. */
export const CRM_MAX_CONTACTS = 20
/** Longest contact value the CRM takes; it refuses control characters in one, as in names. */
const CRM_MAX_CONTACT_VALUE = 254
const ONE_LINE = new RegExp(DISPLAY_NAME_PATTERN)
/** What the chat module takes as a scope, and how many; one odd value must not stop the sync. */
const CHAT_SCOPE = /^[A-Za-z0-9:._-]{1,64}$/
const CHAT_MAX_SCOPES = 50

/**
 * The chat module knows people by id, display name and scopes (docs/people.md); the scopes decide
 * which Telegram widgets a person sees (docs/telegram-widgets.md). A scope change moves the user's
 * timetick_update, so the next sync carries it. The module takes up to 500 per call.
 */
export function chatProfileTarget(instances: ModuleInstances): ProfileTarget {
  return {
    module: 'chat',
    instances,
    batchSize: 200,
    async describe(users) {
      return users.map((user) => ({
        member: String(user.crm_id),
        name: user.name.trim(),
        scopes: parseScopes(user.scopes)
          .filter((scope) => CHAT_SCOPE.test(scope))
          .slice(0, CHAT_MAX_SCOPES),
      }))
    },
  }
}

interface CrmContact {
  kind: 'email' | 'phone' | 'telegram'
  value: string
  verified: boolean
}

function crmContact(contact: Contact): CrmContact | undefined {
  const kind = contact.kind === ContactKind.Email ? 'email' : contact.kind === ContactKind.Phone ? 'phone' : undefined
  if (!kind) return undefined
  return { kind, value: contact.value, verified: (contact.flags & ContactFlags.Verified) !== 0 }
}

/**
 * The reference CRM keeps a profile per person: the display name, when they were created, and
 * their contacts with a verified flag (docs/crm.md, "Verified contacts"): an email address or
 * phone number is verified when the gateway's contact carries ContactFlags.Verified (a code, a
 * magic link or a provider's verified email proved it, or an operator added it as verified); a
 * Telegram account the person signs in with is verified, since Telegram signed the login.
 */
export function crmProfileTarget(
  instances: ModuleInstances,
  { users, federation }: { users: Users; federation: Federation },
): ProfileTarget {
  return {
    module: 'crm',
    instances,
    // Up to 20 contacts of up to 254 characters each keep a call well under the CRM's 1 MiB body limit.
    batchSize: 100,
    async describe(batch: User[]) {
      const ids = batch.map((user) => user.crm_id)
      const contacts = new Map<number, CrmContact[]>(ids.map((id) => [id, []]))
      for (const contact of await users.contactsOfUsers(ids)) {
        const mapped = crmContact(contact)
        if (mapped) contacts.get(contact.crm_id)?.push(mapped)
      }
      for (const identity of await federation.identitiesOfUsers(ids)) {
        if (identity.provider !== TELEGRAM_PROVIDER) continue
        contacts.get(identity.crm_id)?.push({ kind: 'telegram', value: identity.subject, verified: true })
      }
      return batch.map((user) => ({
        member: String(user.crm_id),
        name: user.name.trim(),
        created: new Date(user.created).toISOString(),
        contacts: crmContacts(contacts.get(user.crm_id) ?? []),
      }))
    },
  }
}

/**
 * What the CRM takes: values it would refuse are left out (one odd row must not stop the sync),
 * each contact once, verified ones first, at most CRM_MAX_CONTACTS.
 */
function crmContacts(contacts: CrmContact[]): CrmContact[] {
  const seen = new Set<string>()
  const acceptable = contacts.filter((contact) => {
    const key = `${contact.kind}:${contact.value}`
    if (contact.value.length > CRM_MAX_CONTACT_VALUE || !ONE_LINE.test(contact.value)) return false
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
  // A stable sort: within each group the oldest contact first.
  return acceptable.sort((a, b) => Number(b.verified) - Number(a.verified)).slice(0, CRM_MAX_CONTACTS)
}
