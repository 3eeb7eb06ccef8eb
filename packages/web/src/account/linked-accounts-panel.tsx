import { useEffect, useState } from 'preact/hooks'
import type { AuthApi, LinkedAccount } from '../api/auth-api.ts'
import { failureText } from '../api/envelope.ts'

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })

/**
 * The user's accounts at sign-in providers (Google, GitHub, a partner …; docs/gateway.md, "OAuth
 * and federated sign-in"), each with the email it was linked by, and unlinking. The gateway keeps
 * the last way to sign in from being unlinked. Nothing is shown while none is linked.
 */
export function LinkedAccountsPanel({ auth }: { auth: AuthApi }) {
  const [accounts, setAccounts] = useState<LinkedAccount[]>([])
  const [note, setNote] = useState('')
  const [busy, setBusy] = useState(false)

  useEffect(() => {
    auth
      .linkedAccounts()
      .then(setAccounts)
      .catch((failure) => setNote(failureText(failure)))
  }, [auth])

  async function unlink(account: LinkedAccount) {
    setBusy(true)
    try {
      await auth.unlinkAccount(account.id)
      setAccounts((known) => known.filter((other) => other.id !== account.id))
      setNote(`${account.name} is unlinked. It no longer signs you in.`)
    } catch (failure) {
      setNote(
        failureText(failure, {
          Conflict: `${account.name} is your only way to sign in. Add an email address or a passkey first.`,
        }),
      )
    } finally {
      setBusy(false)
    }
  }

  if (accounts.length === 0 && !note) return null
  return (
    <section class="account-section" aria-labelledby="linked-heading">
      <h2 id="linked-heading">Linked accounts</h2>
      <ul class="credential-list">
        {accounts.map((account) => (
          <li key={account.id}>
            <span class="credential-name">{account.name}</span>
            <span class="hint">
              {account.email && `${account.email} · `}linked {dateFormat.format(account.created)}
            </span>
            <span class="credential-actions">
              <button
                type="button"
                class="link-button"
                aria-label={`Unlink ${account.name}`}
                disabled={busy}
                onClick={() => unlink(account)}
              >
                Unlink
              </button>
            </span>
          </li>
        ))}
      </ul>
      {note && <p role="status">{note}</p>}
    </section>
  )
}
