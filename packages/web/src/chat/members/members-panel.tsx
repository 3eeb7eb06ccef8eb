import { useEffect, useState } from 'preact/hooks'
import type { UserView } from '../../api/auth-api.ts'
import type { ChatApi } from '../../api/chat-api.ts'
import type { ChatView, MemberView } from '../../api/chat-types.ts'
import { failureText } from '../../api/envelope.ts'
import { Avatar } from '../../people/avatar.tsx'
import { usePeopleNames } from '../../people/people-names.ts'
import { compareIds } from '../chat-list/chat-list-state.ts'
import { PRESENCE_MAX_MEMBERS, useMembersPresence } from '../live/use-presence.ts'
import { InviteLink } from '../manage/invite-link.tsx'
import { senderName } from '../message/names.ts'
import { AddMember } from './add-member.tsx'
import { inListOrder, managesChat, memberActions, roleName } from './member-rules.ts'

interface MembersPanelProps {
  api: ChatApi
  chat: ChatView
  me: UserView
  /** Members changed here: the chat's view (member count) is out of date. */
  onChanged: () => void
}

/** Members per page of get_chat_members. */
const PAGE = 100

/**
 * The members of the open chat with their roles and who is online (chats of up to 500 members);
 * owner and admins add and remove members, grant and revoke Admin, and create a group invite link
 * for guests.
 */
export function MembersPanel({ api, chat, me, onChanged }: MembersPanelProps) {
  const [members, setMembers] = useState<MemberView[]>([])
  const [hasMore, setHasMore] = useState(false)
  const [loaded, setLoaded] = useState(false)
  const [busy, setBusy] = useState('')
  const [error, setError] = useState('')
  const names = usePeopleNames()
  const online = useMembersPresence(api, chat.id, chat.member_count <= PRESENCE_MAX_MEMBERS)

  function learn(page: MemberView[]) {
    names?.learn(page.map((member) => ({ id: member.member, name: member.name })))
  }

  async function loadFirst() {
    try {
      const page = await api.getChatMembers(chat.id, { limit: PAGE })
      learn(page.members)
      setMembers(page.members)
      setHasMore(page.has_more)
      setLoaded(true)
    } catch (failure) {
      setError(failureText(failure))
    }
  }

  // Again when the chat changes (a member event refetched it), so the list matches its count.
  useEffect(() => {
    loadFirst()
  }, [api, chat.id, chat.member_count, chat.timetick_update])

  async function loadMore() {
    const after = members.at(-1)?.member
    try {
      const page = await api.getChatMembers(chat.id, { after, limit: PAGE })
      learn(page.members)
      setMembers((known) => [...known, ...page.members])
      setHasMore(page.has_more)
    } catch (failure) {
      setError(failureText(failure))
    }
  }

  /** Runs a change of one member, then reads the list and the chat again. */
  async function change(member: string, action: () => Promise<unknown>) {
    setBusy(member)
    setError('')
    try {
      await action()
      await loadFirst()
      onChanged()
    } catch (failure) {
      setError(failureText(failure))
    } finally {
      setBusy('')
    }
  }

  /** The name the list is ordered by: the one shown, and for the caller their own name rather than "You". */
  function listName(member: MemberView): string {
    return member.member === me.crmId && member.name ? member.name : senderName(member.member, chat, me, names)
  }

  function upsert(added: MemberView) {
    setMembers((known) =>
      [...known.filter((m) => m.member !== added.member), added].sort((a, b) => compareIds(a.member, b.member)),
    )
    onChanged()
  }

  return (
    <section class="members" aria-labelledby="members-heading">
      <h3 id="members-heading">
        Members <span class="member-count">({chat.member_count})</span>
      </h3>
      {managesChat(chat) && <AddMember api={api} chat={chat} onAdded={upsert} />}
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      {!loaded ? (
        <p class="loading">Loading members…</p>
      ) : (
        <ul class="member-list">
          {inListOrder(members, (member) => listName(member)).map((member) => {
            const allowed = memberActions(chat, me.crmId, member)
            const self = member.member === me.crmId
            return (
              <li key={member.member} data-member-id={member.member}>
                <Avatar id={member.member} name={self ? member.name : senderName(member.member, chat, me, names)} />
                <span class="member-name">{senderName(member.member, chat, me, names)}</span>
                {online?.get(member.member) && <span class="presence online">online</span>}
                <span class={`role role-${roleName(member).toLowerCase()}`}>{roleName(member)}</span>
                <span class="member-actions">
                  {allowed.makeAdmin && (
                    <button
                      type="button"
                      class="secondary"
                      disabled={busy !== ''}
                      onClick={() =>
                        change(member.member, () => api.updateMember(chat.id, { member: member.member, admin: true }))
                      }
                    >
                      Make admin
                    </button>
                  )}
                  {allowed.revokeAdmin && (
                    <button
                      type="button"
                      class="secondary"
                      disabled={busy !== ''}
                      onClick={() =>
                        change(member.member, () => api.updateMember(chat.id, { member: member.member, admin: false }))
                      }
                    >
                      {self ? 'Step down as admin' : 'Remove admin'}
                    </button>
                  )}
                  {allowed.remove && (
                    <button
                      type="button"
                      class="danger"
                      disabled={busy !== ''}
                      aria-label={`Remove ${senderName(member.member, chat, me, names)}`}
                      onClick={() => change(member.member, () => api.removeMember(chat.id, member.member))}
                    >
                      Remove
                    </button>
                  )}
                </span>
              </li>
            )
          })}
        </ul>
      )}
      {hasMore && (
        <button type="button" class="secondary" onClick={loadMore}>
          More members
        </button>
      )}
      {managesChat(chat) && <InviteLink api={api} kind="group" chatId={chat.id} label="Create a guest invite link" />}
    </section>
  )
}
