import { ContactFlags, hasFlag } from '@atrium/platform'
import { Type } from 'typebox'
import { parseScopes } from '../auth/caller.ts'
import { type Contact, ContactKind, type User } from './users.repository.ts'

/** A contact as shown to its owner and to modules. */
export const ContactView = Type.Object({
  kind: Type.Union([Type.Literal('email'), Type.Literal('phone')]),
  value: Type.String(),
  verified: Type.Boolean({ description: 'A sign-in proved the address (ContactFlags.Verified).' }),
  manuallyAdded: Type.Boolean({ description: 'Added by an operator (ContactFlags.ManuallyAdded).' }),
})

/** A user as shown to the user and to modules; the CRM id is a string like every id in public JSON. */
export const UserView = Type.Object({
  crmId: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  contacts: Type.Array(ContactView),
})

export function toContactView(contact: Contact) {
  return {
    kind: contact.kind === ContactKind.Email ? ('email' as const) : ('phone' as const),
    value: contact.value,
    verified: hasFlag(contact.flags, ContactFlags.Verified),
    manuallyAdded: hasFlag(contact.flags, ContactFlags.ManuallyAdded),
  }
}

export function toUserView(user: User, contacts: Contact[]) {
  return {
    crmId: String(user.crm_id),
    name: user.name,
    scopes: parseScopes(user.scopes),
    contacts: contacts.map(toContactView),
  }
}
