import { useState } from 'preact/hooks'
import type { AuthApi, UserView } from '../../api/auth-api.ts'
import type { ChatApi } from '../../api/chat-api.ts'
import { failureText } from '../../api/envelope.ts'
import { turnOffPush } from '../../notifications/web-push.ts'
import { Avatar } from '../../people/avatar.tsx'
import { Link } from '../../router/link.tsx'
import { routePath } from '../../router/routes.ts'
import { InviteLink } from '../manage/invite-link.tsx'
import { ownName } from '../message/names.ts'
import { NameNudge } from './name-nudge.tsx'

interface ProfilePanelProps {
  me: UserView
  auth: AuthApi
  api: ChatApi
  onSignedOut: () => void
}

/**
 * Who is signed in, the user id others start a private chat with, the display name (asked for in
 * place while there is none), a personal invite link for guests, and signing out.
 */
export function ProfilePanel({ me, auth, api, onSignedOut }: ProfilePanelProps) {
  const [name, setName] = useState(me.name)
  const [shown, setShown] = useState(ownName(me))
  const [named, setNamed] = useState(me.name !== '')
  const [note, setNote] = useState('')
  const [busy, setBusy] = useState(false)

  /** Saves the display name: the name as saved, or the failure's text. */
  async function save(value: string): Promise<{ saved: string } | { failure: string }> {
    setBusy(true)
    try {
      // Through the gateway, which keeps the name and tells the chat module (docs/people.md).
      const saved = await auth.setProfileName(value.trim())
      setShown(saved.name)
      setName(saved.name)
      setNamed(true)
      return { saved: saved.name }
    } catch (failure) {
      return { failure: failureText(failure) }
    } finally {
      setBusy(false)
    }
  }

  async function saveName(event: Event) {
    event.preventDefault()
    const result = await save(name)
    setNote('saved' in result ? `Others now see you as ${result.saved}.` : result.failure)
  }

  async function signOut() {
    setBusy(true)
    try {
      await turnOffPush(auth).catch(() => {})
      await auth.logout()
    } catch {
      // Signed out already (session ended): the page signs out all the same.
    }
    onSignedOut()
  }

  return (
    <header class="profile">
      <p class="me">
        <Avatar id={me.crmId} name={shown} />
        <span class="me-name">{shown}</span>
      </p>
      {!named && <NameNudge crmId={me.crmId} busy={busy} onSave={save} />}
      <details class="profile-details">
        <summary>Profile</summary>
        <p class="me-id">
          Your user id: <strong data-testid="my-crm-id">{me.crmId}</strong>
        </p>
        <form onSubmit={saveName}>
          <label for="profile-name">Display name</label>
          <input
            id="profile-name"
            name="name"
            maxLength={100}
            required
            value={name}
            onInput={(event) => setName(event.currentTarget.value)}
          />
          <button type="submit" disabled={busy}>
            Save name
          </button>
          {note && <p role="status">{note}</p>}
        </form>
        <p>
          <Link href={routePath({ name: 'account' })}>Account and security</Link>
        </p>
        <button type="button" class="sign-out" disabled={busy} onClick={signOut}>
          Sign out
        </button>
      </details>
      <details class="invite-guest">
        <summary>Invite a guest</summary>
        <p class="hint">Someone without an account opens the link and gets a private chat with you.</p>
        <InviteLink api={api} kind="personal" label="Create an invite link" />
      </details>
    </header>
  )
}
