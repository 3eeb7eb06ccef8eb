import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/browser'
import { useEffect, useState } from 'preact/hooks'
import type { AuthApi, CredentialView } from '../api/auth-api.ts'
import { failureText } from '../api/envelope.ts'
import { ceremonyFailure, loadWebAuthn, webAuthnAvailable } from './webauthn.ts'

const KIND_WORDS: Record<CredentialView['kind'], string> = { passkey: 'Passkey', security_key: 'Security key' }
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })

/** A credential's second line: its kind, whether it syncs, when it was last used. */
function describe(credential: CredentialView): string {
  const parts = [KIND_WORDS[credential.kind]]
  if (credential.multiDevice) parts.push(credential.backedUp ? 'synced' : 'can sync')
  parts.push(credential.lastUsed ? `last used ${dateFormat.format(credential.lastUsed)}` : 'not used yet')
  return parts.join(' · ')
}

/**
 * The signed-in user's passkeys and security keys: add one (the browser's dialog makes it), rename
 * and remove them. A passkey signs in without an email address; a security key after one.
 */
export function PasskeysPanel({ auth }: { auth: AuthApi }) {
  const [credentials, setCredentials] = useState<CredentialView[]>()
  const [note, setNote] = useState('')
  const [busy, setBusy] = useState(false)
  const [renaming, setRenaming] = useState<{ id: string; name: string }>()

  useEffect(() => {
    auth
      .credentials()
      .then(setCredentials)
      .catch((failure) => setNote(failureText(failure)))
  }, [auth])

  async function act(action: () => Promise<string>) {
    setBusy(true)
    setNote('')
    try {
      setNote(await action())
    } catch (failure) {
      setNote(ceremonyFailure(failure))
    } finally {
      setBusy(false)
    }
  }

  const add = (kind: CredentialView['kind']) =>
    act(async () => {
      const { startRegistration } = await loadWebAuthn()
      const { challengeId, options } = await auth.registrationOptions<PublicKeyCredentialCreationOptionsJSON>(kind)
      const response = await startRegistration({ optionsJSON: options })
      const name = `${KIND_WORDS[kind]} ${(credentials?.length ?? 0) + 1}`
      const added = await auth.register(challengeId, name, response)
      setCredentials((known) => [added, ...(known ?? [])])
      return `${added.name} added. You can sign in with it now.`
    })

  const rename = (id: string, name: string) =>
    act(async () => {
      const renamed = await auth.renameCredential(id, name)
      setCredentials((known) => known?.map((credential) => (credential.id === id ? renamed : credential)))
      setRenaming(undefined)
      return `Renamed to ${renamed.name}.`
    })

  const remove = (credential: CredentialView) =>
    act(async () => {
      await auth.removeCredential(credential.id)
      setCredentials((known) => known?.filter((other) => other.id !== credential.id))
      return `${credential.name} removed. It no longer signs you in.`
    })

  return (
    <section class="passkeys" aria-labelledby="passkeys-heading">
      <h3 id="passkeys-heading">Passkeys and security keys</h3>
      {credentials === undefined ? (
        <p class="hint">Loading…</p>
      ) : credentials.length === 0 ? (
        <p class="hint">None yet. Add one to sign in without a code.</p>
      ) : (
        <ul class="credential-list">
          {credentials.map((credential) => (
            <li key={credential.id}>
              {renaming?.id === credential.id ? (
                <form
                  class="credential-rename"
                  onSubmit={(event) => {
                    event.preventDefault()
                    rename(credential.id, renaming.name.trim())
                  }}
                >
                  <label for={`credential-name-${credential.id}`}>New name for {credential.name}</label>
                  <input
                    id={`credential-name-${credential.id}`}
                    maxLength={100}
                    required
                    value={renaming.name}
                    onInput={(event) => setRenaming({ id: credential.id, name: event.currentTarget.value })}
                  />
                  <button type="submit" disabled={busy}>
                    Save
                  </button>
                  <button type="button" class="secondary" onClick={() => setRenaming(undefined)}>
                    Cancel
                  </button>
                </form>
              ) : (
                <>
                  <span class="credential-name">{credential.name}</span>
                  <span class="hint">{describe(credential)}</span>
                  <span class="credential-actions">
                    <button
                      type="button"
                      class="link-button"
                      aria-label={`Rename ${credential.name}`}
                      onClick={() => setRenaming({ id: credential.id, name: credential.name })}
                    >
                      Rename
                    </button>
                    <button
                      type="button"
                      class="link-button"
                      aria-label={`Remove ${credential.name}`}
                      disabled={busy}
                      onClick={() => remove(credential)}
                    >
                      Remove
                    </button>
                  </span>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      {webAuthnAvailable() ? (
        <div class="form-actions">
          <button type="button" class="secondary" disabled={busy} onClick={() => add('passkey')}>
            Add a passkey
          </button>
          <button type="button" class="secondary" disabled={busy} onClick={() => add('security_key')}>
            Add a security key
          </button>
        </div>
      ) : (
        <p class="hint">This browser cannot use passkeys or security keys.</p>
      )}
      {note && <p role="status">{note}</p>}
    </section>
  )
}
