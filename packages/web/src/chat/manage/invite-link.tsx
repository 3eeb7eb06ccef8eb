import { useState } from 'preact/hooks'
import type { ChatApi } from '../../api/chat-api.ts'
import type { InviteView } from '../../api/chat-types.ts'
import { failureText } from '../../api/envelope.ts'

interface InviteLinkProps {
  api: ChatApi
  /** `personal`: each guest device gets a private chat with the caller; `group`: guests join `chatId`. */
  kind: 'personal' | 'group'
  chatId?: string
  label: string
}

/** Creates an invite (create_invite) and shows its link (spec route /chat?code=<invite_code>) to copy. */
export function InviteLink({ api, kind, chatId, label }: InviteLinkProps) {
  const [invite, setInvite] = useState<InviteView>()
  const [note, setNote] = useState('')
  const [busy, setBusy] = useState(false)
  const link = invite ? new URL(invite.path, location.origin).href : ''

  async function create() {
    setBusy(true)
    setNote('')
    try {
      setInvite(await api.createInvite(kind, chatId))
    } catch (failure) {
      setNote(failureText(failure))
    } finally {
      setBusy(false)
    }
  }

  async function copy() {
    try {
      await navigator.clipboard.writeText(link)
      setNote('Link copied.')
    } catch {
      setNote('Copying is not allowed here: select the link and copy it.')
    }
  }

  const fieldId = `invite-link-${kind}`
  return (
    <div class="invite-link">
      <button type="button" class="secondary" disabled={busy} onClick={create}>
        {invite ? 'Create another link' : label}
      </button>
      {invite && (
        <>
          <label for={fieldId}>Invite link</label>
          <div class="invite-link-row">
            <input
              id={fieldId}
              readOnly
              value={link}
              data-invite-code={invite.code}
              onFocus={(event) => event.currentTarget.select()}
            />
            <button type="button" onClick={copy}>
              Copy
            </button>
          </div>
        </>
      )}
      {note && <p role="status">{note}</p>}
    </div>
  )
}
