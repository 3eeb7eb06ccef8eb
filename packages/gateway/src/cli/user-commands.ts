import { ContactFlags } from '@atrium/platform'
import { parseScopes } from '../auth/caller.ts'
import {
  addContactByHand,
  type Contact,
  ContactKind,
  createUsers,
  normalizeEmail,
  normalizePhone,
  parseContact,
  type User,
} from '../users/users.repository.ts'
import {
  asCommandError,
  type Command,
  CommandFailed,
  formatTable,
  formatTime,
  parseId,
  parseScopeList,
  stringOption,
  UsageError,
} from './command.ts'

function userView(user: User, contacts: Contact[]) {
  return {
    crmId: String(user.crm_id),
    name: user.name,
    scopes: parseScopes(user.scopes),
    emails: contacts.filter((contact) => contact.kind === ContactKind.Email).map((contact) => contact.value),
    phones: contacts.filter((contact) => contact.kind === ContactKind.Phone).map((contact) => contact.value),
    created: user.created,
  }
}

const createUser: Command = {
  name: 'user create',
  usage: '--email e | --phone p [--name n] [--scopes a,b]',
  summary:
    'Create a user with an email address, a phone number or both, added as ManuallyAdded and Verified, so the user can sign in with them.',
  example: 'atrium user create --email admin@example.com --name "Site admin" --scopes admin',
  options: {
    email: { type: 'string' },
    phone: { type: 'string' },
    name: { type: 'string' },
    scopes: { type: 'string' },
  },
  async run({ values }, { store }) {
    const emailText = stringOption(values, 'email')
    const phoneText = stringOption(values, 'phone')
    const email = emailText === undefined ? undefined : normalizeEmail(emailText)
    const phone = phoneText === undefined ? undefined : normalizePhone(phoneText)
    if (emailText !== undefined && !email) throw new UsageError(`not an email address: ${JSON.stringify(emailText)}`)
    if (phoneText !== undefined && !phone) {
      throw new UsageError(
        `not a phone number in international form (+<country><number>): ${JSON.stringify(phoneText)}`,
      )
    }
    // Sign-in is by email or phone code only: a user without either could never sign in (issue 16).
    if (!email && !phone) throw new UsageError('give --email or --phone (or both): the user signs in with them')
    const name = stringOption(values, 'name') ?? ''
    if (name.length > 200) throw new UsageError('the name is longer than 200 characters')
    const scopes = parseScopeList(stringOption(values, 'scopes') ?? '')
    const contacts = [
      ...(email ? [{ kind: ContactKind.Email, value: email }] : []),
      ...(phone ? [{ kind: ContactKind.Phone, value: phone }] : []),
    ]
    for (const contact of contacts) {
      const taken = await store.users.findContact(contact.kind, contact.value)
      if (taken) throw new CommandFailed(`${contact.value} already belongs to user ${taken.crm_id}`)
    }
    // User and contacts together or not at all.
    const { user, added } = await store.db.transaction().execute(async (trx) => {
      const users = createUsers(trx, store.nextTick, store.now)
      const user = await users.create({ name, scopes })
      const added: Contact[] = []
      for (const contact of contacts)
        added.push(await users.addContact(user.crm_id, contact.kind, contact.value, ContactFlags.Verified))
      return { user, added }
    })
    const view = userView(user, added)
    return {
      text: `Created user ${view.crmId}${view.scopes.length ? ` with scopes ${view.scopes.join(' ')}` : ''}`,
      json: view,
    }
  },
}

const setScopes: Command = {
  name: 'user scopes',
  usage: '<crmId> <scopes>',
  summary: 'Replace the scopes of a user (comma- or space-separated; "" for none).',
  example: 'atrium user scopes 123456789 admin,chat',
  positionals: 2,
  async run({ args }, { store }) {
    const crmId = parseId(args[0], 'crmId')
    const scopes = parseScopeList(args[1] ?? '')
    if (!(await store.users.setScopes(crmId, scopes))) throw new CommandFailed(`no user ${crmId}`)
    return {
      text: `User ${crmId} now has scopes: ${scopes.join(' ') || '(none)'}`,
      json: { crmId: String(crmId), scopes },
    }
  },
}

const listUsers: Command = {
  name: 'user list',
  usage: '',
  summary: 'List users with their scopes and contacts.',
  example: 'atrium user list',
  async run(_input, { store }) {
    // A read-only listing for operators; the users repository has no bulk read of its own.
    const users = await store.db.selectFrom('users').selectAll().orderBy('crm_id').execute()
    const contacts = await store.db.selectFrom('contacts').selectAll().orderBy('id').execute()
    const views = users.map((user) =>
      userView(
        user,
        contacts.filter((contact) => contact.crm_id === user.crm_id),
      ),
    )
    const rows = views.map((view) => [
      view.crmId,
      view.name,
      view.scopes.join(' '),
      [...view.emails, ...view.phones].join(' '),
      formatTime(view.created),
    ])
    return { text: formatTable(['CRM ID', 'NAME', 'SCOPES', 'CONTACTS', 'CREATED'], rows), json: { users: views } }
  },
}

const addContact: Command = {
  name: 'contact add',
  usage: '<crmId> <email or phone> [--unverified]',
  summary:
    'Give a user an email address or phone number (Verified unless --unverified); refused when another user has it.',
  example: 'atrium contact add 123456789 ada@example.com',
  positionals: 2,
  options: { unverified: { type: 'boolean' } },
  async run({ args, values }, { store }) {
    const crmId = parseId(args[0], 'crmId')
    if (!(await store.users.get(crmId))) throw new CommandFailed(`no user ${crmId}`)
    const contact = await addContactByHand(store.users, crmId, args[1] ?? '', values.unverified !== true).catch(
      (error: unknown) => {
        throw asCommandError(error)
      },
    )
    const verified = (contact.flags & ContactFlags.Verified) !== 0
    return {
      text: `User ${crmId} now has ${contact.value}${verified ? ' (verified)' : ''}`,
      json: { crmId: String(crmId), contact: contact.value, verified },
    }
  },
}

const removeContact: Command = {
  name: 'contact remove',
  usage: '<crmId> <email or phone>',
  summary: 'Take an email address or phone number from a user; their sessions stay.',
  example: 'atrium contact remove 123456789 +4915112345678',
  positionals: 2,
  async run({ args }, { store }) {
    const crmId = parseId(args[0], 'crmId')
    const typed = parseContact(args[1] ?? '')
    if (!typed) throw new UsageError(`${JSON.stringify(args[1] ?? '')} is neither an email address nor a phone number`)
    const contact = (await store.users.contactsOf(crmId)).find(
      (row) => row.kind === typed.kind && row.value === typed.value,
    )
    if (!contact) throw new CommandFailed(`user ${crmId} has no contact ${typed.value}`)
    await store.users.removeContact(crmId, contact.id)
    return {
      text: `Removed ${contact.value} from user ${crmId}; their sessions stay`,
      json: { crmId: String(crmId), removed: contact.value },
    }
  },
}

export const userCommands: Command[] = [createUser, setScopes, listUsers, addContact, removeContact]
