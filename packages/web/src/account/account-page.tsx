import type { AuthApi, UserView } from '../api/auth-api.ts'
import type { ChatApi } from '../api/chat-api.ts'
import { ownName } from '../chat/message/names.ts'
import { PasskeysPanel } from '../passkeys/passkeys-panel.tsx'
import { lazy } from '../router/lazy.tsx'
import { Link } from '../router/link.tsx'
import { MOUNT } from '../router/routes.ts'
import { LinkedAccountsPanel } from './linked-accounts-panel.tsx'
import { NotificationsPanel } from './notifications-panel.tsx'
import { SessionsPanel } from './sessions-panel.tsx'
import { TelegramPanel } from './telegram-panel.tsx'
import { UserKeysPanel } from './user-keys-panel.tsx'

const AssistantsPanel = lazy(() => import('./assistants-panel.tsx').then((module) => module.AssistantsPanel))

interface AccountPageProps {
  me: UserView
  auth: AuthApi
  chat: ChatApi
  onSignedOut: () => void
}

/**
 * /chat/account: notifications in this browser, how the user signs in (their verified contacts,
 * passkeys and security keys, accounts at sign-in providers, keys for scripts), their Telegram for
 * codes and notifications, their AI assistants' keys and tools, and where they are signed in, with
 * remote sign-out.
 */
export function AccountPage({ me, auth, chat, onSignedOut }: AccountPageProps) {
  return (
    <main class="account">
      <p>
        <Link href={MOUNT}>← Back to the messenger</Link>
      </p>
      <h1>Account and security</h1>
      <p class="hint">Signed in as {ownName(me)}.</p>
      <section class="account-section" aria-labelledby="contacts-heading">
        <h2 id="contacts-heading">Email and phone</h2>
        <ul class="contact-list">
          {me.contacts.map((contact) => (
            <li key={`${contact.kind}:${contact.value}`}>
              <span>{contact.value}</span>{' '}
              <span class="hint">
                {contact.kind === 'email' ? 'email' : 'phone'} · {contact.verified ? 'verified' : 'not verified'}
              </span>
            </li>
          ))}
        </ul>
        <p class="hint">A code sent to a verified address or number signs you in.</p>
      </section>
      <NotificationsPanel auth={auth} />
      <section class="account-section">
        <PasskeysPanel auth={auth} />
      </section>
      <LinkedAccountsPanel auth={auth} />
      <TelegramPanel chat={chat} />
      <UserKeysPanel auth={auth} />
      <AssistantsPanel auth={auth} crmId={me.crmId} />
      <SessionsPanel auth={auth} onSignedOut={onSignedOut} />
    </main>
  )
}
