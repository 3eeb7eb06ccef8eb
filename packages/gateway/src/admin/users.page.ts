import { ApiError, ContactFlags, flagNames } from '@atrium/platform'
import { adminHref, adminTime, emptyState, filterForm, html, pager } from '@atrium/platform/admin'
import type { FastifyInstance } from 'fastify'
import type { ApiKeys } from '../auth/api-keys.repository.ts'
import { parseScopes, SCOPE_NAME } from '../auth/caller.ts'
import type { Sessions } from '../sessions/sessions.repository.ts'
import { addContactByHand, ContactKind, normalizeEmail, normalizePhone, type User } from '../users/users.repository.ts'
import {
  ADMIN_ROOT,
  type AdminContext,
  idField,
  listLimit,
  nextPage,
  OPERATOR_SCOPE,
  operatorAction,
  type PageQuery,
  pageQuery,
  sendAdminPage,
} from './admin-shell.ts'

export interface UsersPageOptions extends AdminContext {
  sessions: Sessions
  apiKeys: ApiKeys
}

const LIST = `${ADMIN_ROOT}/Users`
const DETAIL = `${ADMIN_ROOT}/UserDetail`

/** The users a search names: a CRM id, an exact email address or phone number, or else part of a name. */
async function searchUsers(
  { users }: AdminContext,
  text: string,
  before: number | undefined,
  limit: number,
): Promise<User[]> {
  const id = idField(text)
  const contact =
    id === undefined
      ? ((normalizeEmail(text) && (await users.findContact(ContactKind.Email, normalizeEmail(text)!))) ??
        (normalizePhone(text) && (await users.findContact(ContactKind.Phone, normalizePhone(text)!))))
      : undefined
  const exact = id ?? (contact ? contact.crm_id : undefined)
  if (exact !== undefined) {
    const user = before === undefined || exact < before ? await users.get(exact) : undefined
    return user ? [user] : []
  }
  return users.page({ name: text, before, limit })
}

/** /ProxyAdmin/Users (search, list) and /ProxyAdmin/UserDetail (contacts, sessions, API keys) with their revoke actions. */
export default async function usersPage(app: FastifyInstance, options: UsersPageOptions) {
  const { users, sessions, apiKeys } = options

  app.get(LIST, { schema: pageQuery }, async (request, reply) => {
    const query = request.query as PageQuery
    const limit = listLimit(query)
    const search = (query.Search ?? '').trim()
    const rows = await searchUsers(options, search, idField(query.FromTick), limit)
    const contacts = await users.contactsOfUsers(rows.map((user) => user.crm_id))
    return sendAdminPage(request, reply, {
      title: 'Users',
      current: LIST,
      body: html`
        ${filterForm(LIST, [
          {
            name: 'Search',
            label: 'Name, email, phone or CRM id',
            value: search,
            placeholder: 'alice@example.com',
          },
        ])}
        ${
          rows.length === 0
            ? emptyState(search ? `No user matches “${search}”.` : 'No user has signed up yet.')
            : html`<table>
              <thead><tr><th>User</th><th>Contacts</th><th>Scopes</th><th>Signed up</th></tr></thead>
              <tbody>
                ${rows.map(
                  (user) => html`<tr>
                    <td><a href=${adminHref(DETAIL, { CrmId: user.crm_id })}>${user.name || '(no name)'}</a>
                      <span class="muted"> (${String(user.crm_id)})</span></td>
                    <td>${contacts
                      .filter((contact) => contact.crm_id === user.crm_id)
                      .map((contact) => contact.value)
                      .join(', ')}</td>
                    <td>${users.scopesOf(user).join(' ')}</td>
                    <td>${adminTime(user.created)}</td>
                  </tr>`,
                )}
              </tbody>
            </table>`
        }
        ${pager(
          nextPage(
            LIST,
            query,
            rows.map((user) => ({ id: user.crm_id })),
            limit,
          ),
        )}
      `,
    })
  })

  app.get(DETAIL, { schema: pageQuery }, async (request, reply) => {
    const query = request.query as PageQuery
    const crmId = idField(query.CrmId)
    const user = crmId === undefined ? undefined : await users.get(crmId)
    if (!user)
      return reply
        .code(303)
        .header('location', adminHref(LIST, { error: 'No such user.' }))
        .send()
    const [contacts, live, keys] = await Promise.all([
      users.contactsOf(user.crm_id),
      sessions.list(user.crm_id),
      apiKeys.list({ crmId: user.crm_id }),
    ])
    const hidden = html`<input type="hidden" name="CrmId" value=${String(user.crm_id)} />`
    return sendAdminPage(request, reply, {
      title: `${user.name || '(no name)'} (${user.crm_id})`,
      current: LIST,
      body: html`
        <dl class="fields">
          <dt>CRM id</dt><dd><code>${String(user.crm_id)}</code></dd>
          <dt>Name</dt><dd>${user.name || '(no name)'}</dd>
          <dt>Scopes</dt><dd><form class="inline" method="post" action=${`${DETAIL}/Scopes`}>
            ${hidden}<label class="visually-hidden" for="scopes">Scopes</label>
            <input id="scopes" name="Scopes" value=${users.scopesOf(user).join(' ')} placeholder="(none)" />
            <button type="submit">Save scopes</button></form>
            <span class="muted"> space-separated; ${OPERATOR_SCOPE} opens these pages</span></dd>
          <dt>Signed up</dt><dd>${adminTime(user.created)}</dd>
          <dt>Sign-ins</dt><dd><a href=${adminHref(`${ADMIN_ROOT}/LoginAudit`, { User: user.crm_id })}>Login audit</a>
            · <a href=${adminHref(`${ADMIN_ROOT}/PushSubscriptions`, { User: user.crm_id })}>Push subscriptions</a></dd>
        </dl>
        <h2>Contacts</h2>
        ${
          contacts.length === 0
            ? emptyState('No email address or phone number.')
            : html`<table>
              <thead><tr><th>Kind</th><th>Value</th><th>Flags</th><th>Added</th><th></th></tr></thead>
              <tbody>${contacts.map(
                (contact) => html`<tr>
                  <td>${contact.kind === ContactKind.Email ? 'Email' : 'Phone'}</td>
                  <td>${contact.value}</td>
                  <td>${flagNames(ContactFlags, contact.flags).join(', ') || '—'}</td>
                  <td>${adminTime(contact.created)}</td>
                  <td><form class="inline" method="post" action=${`${DETAIL}/ContactVerified`}>
                    ${hidden}<input type="hidden" name="Contact" value=${String(contact.id)} />
                    ${
                      contact.flags & ContactFlags.Verified
                        ? html`<input type="hidden" name="Verified" value="false" /><button type="submit">Mark unverified</button>`
                        : html`<input type="hidden" name="Verified" value="true" /><button type="submit">Mark verified</button>`
                    }
                  </form>
                  <form class="inline" method="post" action=${`${DETAIL}/RemoveContact`}>
                    ${hidden}<input type="hidden" name="Contact" value=${String(contact.id)} />
                    <button class="danger" type="submit" aria-label=${`Remove ${contact.value}`}>Remove</button>
                  </form></td>
                </tr>`,
              )}</tbody>
            </table>`
        }
        <form class="filters" method="post" action=${`${DETAIL}/AddContact`}>
          ${hidden}
          <label for="new-contact">Add an email address or phone number
            <input id="new-contact" name="Contact" required maxlength="254" placeholder="name@example.com or +4915112345678" /></label>
          <label for="new-contact-verified"><input id="new-contact-verified" type="checkbox" name="Verified" value="true" />
            Verified</label>
          <button type="submit">Add contact</button>
        </form>
        <h2>Sessions</h2>
        ${
          live.length === 0
            ? emptyState('No live session: the user is signed out everywhere.')
            : html`<table>
              <thead><tr><th>Signed in</th><th>Method</th><th>Last seen</th><th>IP address</th><th>Browser</th><th></th></tr></thead>
              <tbody>${live.map(
                (session) => html`<tr>
                  <td>${adminTime(session.created)}</td>
                  <td>${session.method}</td>
                  <td>${adminTime(session.last_seen)}</td>
                  <td>${session.ip}</td>
                  <td class="muted">${session.user_agent}</td>
                  <td><form class="inline" method="post" action=${`${DETAIL}/RevokeSession`}>
                    ${hidden}<input type="hidden" name="Session" value=${session.id.slice(0, 16)} />
                    <button class="danger" type="submit">Revoke</button>
                  </form></td>
                </tr>`,
              )}</tbody>
            </table>`
        }
        <h2>API keys</h2>
        ${
          keys.length === 0
            ? emptyState('No API key.')
            : html`<table>
              <thead><tr><th>Name</th><th>Prefix</th><th>Scopes</th><th>Created</th><th>Last used</th><th>State</th><th></th></tr></thead>
              <tbody>${keys.map(
                (key) => html`<tr>
                  <td>${key.name}</td>
                  <td><code>${key.prefix}</code></td>
                  <td>${key.scopes}</td>
                  <td>${adminTime(key.created)}</td>
                  <td>${adminTime(key.last_used) || 'never'}</td>
                  <td>${key.revoked ? `revoked ${adminTime(key.revoked)}` : 'active'}</td>
                  <td>${
                    key.revoked
                      ? null
                      : html`<form class="inline" method="post" action=${`${DETAIL}/RevokeApiKey`}>
                        ${hidden}<input type="hidden" name="Key" value=${String(key.id)} />
                        <button class="danger" type="submit">Revoke</button>
                      </form>`
                  }</td>
                </tr>`,
              )}</tbody>
            </table>`
        }
      `,
    })
  })

  const backToUser = (form: Record<string, string>) => adminHref(DETAIL, { CrmId: form.CrmId })

  // Scopes are replaced as a whole, as `atrium user scopes` does, with the same names allowed.
  operatorAction(app, options, {
    path: `${DETAIL}/Scopes`,
    action: 'user.scopes',
    target: (form) => form.CrmId ?? '',
    back: backToUser,
    perform: async (form, request) => {
      const crmId = idField(form.CrmId)
      const scopes = [...new Set(parseScopes(form.Scopes ?? ''))]
      const bad = scopes.find((scope) => !SCOPE_NAME.test(scope))
      if (bad !== undefined) {
        throw new ApiError(
          'InvalidRequest',
          `Invalid scope ${JSON.stringify(bad.slice(0, 80))}: letters, digits and : . _ - only, at most 64.`,
        )
      }
      // An operator cannot lock themselves out: another operator takes the scope away.
      if (crmId === request.caller.crmId && !scopes.includes(OPERATOR_SCOPE)) {
        throw new ApiError('Conflict', `You cannot remove your own ${OPERATOR_SCOPE} scope; ask another operator.`)
      }
      if (crmId === undefined || !(await users.setScopes(crmId, scopes)))
        throw new ApiError('NotFound', 'No such user.')
      const list = scopes.join(' ') || '(none)'
      return { detail: list, notice: `Scopes saved: ${list}.` }
    },
  })

  /** One of the form's user's contacts, named by its id; NotFound otherwise. */
  async function contactOf(form: Record<string, string>) {
    const crmId = idField(form.CrmId)
    const contactId = idField(form.Contact)
    const contact =
      crmId === undefined || contactId === undefined
        ? undefined
        : (await users.contactsOf(crmId)).find((row) => row.id === contactId)
    if (!contact || crmId === undefined) throw new ApiError('NotFound', 'That contact is not one of this user’s.')
    return { crmId, contact }
  }

  // Verified is the one flag an operator sets; ManuallyAdded records how the contact came and stays.
  operatorAction(app, options, {
    path: `${DETAIL}/ContactVerified`,
    action: 'contact.verified',
    target: (form) => form.CrmId ?? '',
    back: backToUser,
    perform: async (form) => {
      const { crmId, contact } = await contactOf(form)
      const verified = form.Verified === 'true'
      const flags = verified ? contact.flags | ContactFlags.Verified : contact.flags & ~ContactFlags.Verified
      await users.setContactFlags(crmId, contact.id, flags)
      const state = verified ? 'verified' : 'unverified'
      return { detail: `${contact.value} ${state}`, notice: `${contact.value} marked ${state}.` }
    },
  })

  operatorAction(app, options, {
    path: `${DETAIL}/AddContact`,
    action: 'contact.add',
    target: (form) => form.CrmId ?? '',
    back: backToUser,
    perform: async (form) => {
      const crmId = idField(form.CrmId)
      if (crmId === undefined || !(await users.get(crmId))) throw new ApiError('NotFound', 'No such user.')
      const verified = form.Verified === 'true'
      const contact = await addContactByHand(users, crmId, form.Contact ?? '', verified)
      const state = verified ? ', verified' : ''
      return { detail: `${contact.value}${state}`, notice: `${contact.value} added${state}.` }
    },
  })

  operatorAction(app, options, {
    path: `${DETAIL}/RemoveContact`,
    action: 'contact.remove',
    target: (form) => form.CrmId ?? '',
    back: backToUser,
    perform: async (form) => {
      const { crmId, contact } = await contactOf(form)
      await users.removeContact(crmId, contact.id)
      return {
        detail: contact.value,
        notice: `${contact.value} removed; the user no longer signs in with it (their sessions stay).`,
      }
    },
  })

  // Sessions are named by the first 16 hex digits of their id: enough to pick one of a user's
  // sessions, while the page never shows the whole id (the hash of the cookie token).
  operatorAction(app, options, {
    path: `${DETAIL}/RevokeSession`,
    action: 'session.revoke',
    target: (form) => form.CrmId ?? '',
    back: backToUser,
    perform: async (form) => {
      const crmId = idField(form.CrmId)
      const prefix = form.Session ?? ''
      const session =
        crmId === undefined || !/^[0-9a-f]{16}$/.test(prefix)
          ? undefined
          : (await sessions.list(crmId)).find((row) => row.id.startsWith(prefix))
      if (!session) throw new ApiError('NotFound', 'That session has already ended.')
      await sessions.revoke(session.id)
      return {
        detail: `session ${prefix}… (${session.method}, ${session.ip})`,
        notice: 'Session revoked: that browser is signed out.',
      }
    },
  })

  operatorAction(app, options, {
    path: `${DETAIL}/RevokeApiKey`,
    action: 'api_key.revoke',
    target: (form) => form.CrmId ?? '',
    back: backToUser,
    perform: async (form) => {
      const crmId = idField(form.CrmId)
      const keyId = idField(form.Key)
      const key = keyId === undefined ? undefined : await apiKeys.get(keyId)
      if (!key || key.crm_id !== crmId || !(await apiKeys.revoke(key.id))) {
        throw new ApiError('NotFound', 'That API key is not an active key of this user.')
      }
      return { detail: `key ${key.prefix} (${key.name})`, notice: `API key ${key.name || key.prefix} revoked.` }
    },
  })
}
