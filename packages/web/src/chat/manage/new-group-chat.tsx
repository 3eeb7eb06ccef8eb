import { useRef, useState } from 'preact/hooks'
import type { ChatApi } from '../../api/chat-api.ts'
import type { ChatView } from '../../api/chat-types.ts'
import { failureText, isFailure } from '../../api/envelope.ts'
import { unknownPeopleText } from '../../people/people-names.ts'
import { ChatType } from '../message/names.ts'
import { parseMemberIds } from './member-ids.ts'

interface NewGroupChatProps {
  api: ChatApi
  /** Info channels may be created too (full mode). */
  channels: boolean
  onCreated: (chat: ChatView) => void
}

/** Creates a group, or in full mode an info channel (create_chat), with an optional first set of members. */
export function NewGroupChat({ api, channels, onCreated }: NewGroupChatProps) {
  const [type, setType] = useState<2 | 4>(ChatType.Group)
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [members, setMembers] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')
  const details = useRef<HTMLDetailsElement>(null)

  async function submit(event: Event) {
    event.preventDefault()
    const parsed = parseMemberIds(members)
    if ('bad' in parsed) {
      setError(`"${parsed.bad}" is not a user id (a number, e.g. 1002).`)
      return
    }
    setBusy(true)
    setError('')
    try {
      const chat = await api.createChat({
        type,
        name: name.trim(),
        description: description.trim(),
        members: parsed.ids,
      })
      setName('')
      setDescription('')
      setMembers('')
      if (details.current) details.current.open = false
      onCreated(chat)
    } catch (failure) {
      // The ids the chat module does not know are in the error's details (docs/people.md).
      const unknown = isFailure(failure, 'UserNotFound')
        ? ((failure.details as { members?: string[] } | undefined)?.members ?? [])
        : []
      setError(unknown.length > 0 ? unknownPeopleText(unknown) : failureText(failure))
    } finally {
      setBusy(false)
    }
  }

  return (
    <details class="new-chat" ref={details}>
      <summary>{channels ? 'New group or channel' : 'New group'}</summary>
      <form onSubmit={submit}>
        {channels && (
          <fieldset class="segmented">
            <legend class="visually-hidden">Kind</legend>
            <button type="button" aria-pressed={type === ChatType.Group} onClick={() => setType(ChatType.Group)}>
              Group
            </button>
            <button
              type="button"
              aria-pressed={type === ChatType.InfoChannel}
              onClick={() => setType(ChatType.InfoChannel)}
            >
              Channel
            </button>
          </fieldset>
        )}
        {type === ChatType.InfoChannel && <p class="hint">In a channel only you and its admins post.</p>}
        <label for="new-group-name">Name</label>
        <input
          id="new-group-name"
          name="name"
          maxLength={200}
          required
          value={name}
          onInput={(event) => setName(event.currentTarget.value)}
        />
        <label for="new-group-description">Description (optional)</label>
        <input
          id="new-group-description"
          name="description"
          maxLength={2000}
          value={description}
          onInput={(event) => setDescription(event.currentTarget.value)}
        />
        <label for="new-group-members">Members' user ids (optional)</label>
        <input
          id="new-group-members"
          name="members"
          autoComplete="off"
          placeholder="1002, 1003"
          value={members}
          onInput={(event) => setMembers(event.currentTarget.value)}
        />
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {type === ChatType.InfoChannel ? 'Create channel' : 'Create group'}
        </button>
      </form>
    </details>
  )
}
