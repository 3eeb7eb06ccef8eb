import { useEffect, useState } from 'preact/hooks'
import type { AuthApi, UserKeyView } from '../api/auth-api.ts'
import { failureText } from '../api/envelope.ts'
import { usePanelAction } from './use-panel-action.ts'

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })

/**
 * Ed25519 public keys for UserKey sign-in (scripts, CLIs, devices; docs/gateway.md, "UserKey"):
 * listed by name and fingerprint, added by pasting the public key, removed.
 */
export function UserKeysPanel({ auth }: { auth: AuthApi }) {
  const [keys, setKeys] = useState<UserKeyView[]>()
  const [name, setName] = useState('')
  const [publicKey, setPublicKey] = useState('')
  const { note, setNote, busy, act } = usePanelAction()

  useEffect(() => {
    auth
      .userKeys()
      .then(setKeys)
      .catch((failure) => setNote(failureText(failure)))
  }, [auth])

  const add = (event: Event) => {
    event.preventDefault()
    act(
      async () => {
        const added = await auth.addUserKey(name.trim(), publicKey.trim())
        setKeys((known) => [added, ...(known ?? [])])
        setName('')
        setPublicKey('')
        return `${added.name} added (${added.fingerprint}).`
      },
      {
        InvalidRequest: 'That is not an Ed25519 public key. Paste the PEM “PUBLIC KEY” or the 43-character raw key.',
        Conflict: 'This key is registered already, or you have 20 keys. Remove one first.',
      },
    )
  }

  const remove = (key: UserKeyView) =>
    act(async () => {
      await auth.removeUserKey(key.id)
      setKeys((known) => known?.filter((other) => other.id !== key.id))
      return `${key.name} removed. It no longer signs in.`
    })

  return (
    <section class="account-section" aria-labelledby="user-keys-heading">
      <h2 id="user-keys-heading">Keys for scripts and devices</h2>
      <p class="hint">
        An Ed25519 key signs in a script, a command-line tool or a device without a code. Only the public key is kept
        here.
      </p>
      {keys && keys.length > 0 && (
        <ul class="credential-list">
          {keys.map((key) => (
            <li key={key.id}>
              <span class="credential-name">{key.name}</span>
              <span class="hint">
                <code>{key.fingerprint}</code> ·{' '}
                {key.lastUsed ? `last used ${dateFormat.format(key.lastUsed)}` : 'not used yet'}
              </span>
              <span class="credential-actions">
                <button
                  type="button"
                  class="link-button"
                  aria-label={`Remove ${key.name}`}
                  disabled={busy}
                  onClick={() => remove(key)}
                >
                  Remove
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      <form class="user-key-form" onSubmit={add}>
        <label for="user-key-name">Key name</label>
        <input
          id="user-key-name"
          maxLength={100}
          required
          value={name}
          onInput={(event) => setName(event.currentTarget.value)}
        />
        <label for="user-key-public">Public key</label>
        <textarea
          id="user-key-public"
          rows={3}
          required
          spellcheck={false}
          placeholder="-----BEGIN PUBLIC KEY-----"
          value={publicKey}
          onInput={(event) => setPublicKey(event.currentTarget.value)}
        />
        <button type="submit" class="secondary" disabled={busy}>
          Add key
        </button>
      </form>
      {note && <p role="status">{note}</p>}
    </section>
  )
}
