import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { UserView } from '../../api/auth-api.ts'
import type { ChatApi } from '../../api/chat-api.ts'
import type { ChatView } from '../../api/chat-types.ts'
import { failureText, isFailure } from '../../api/envelope.ts'
import { Link } from '../../router/link.tsx'
import { routePath } from '../../router/routes.ts'
import { MembersPanel } from '../members/members-panel.tsx'
import { ChatType, chatKind } from '../message/names.ts'
import { type MuteChange, MuteControl } from './mute-control.tsx'

interface ChatPanelProps {
  api: ChatApi
  chat: ChatView
  me: UserView
  /** The deployment's mode offers the file browser: the panel links to the chat's files. */
  fileBrowser: boolean
  /** A fresher view of the chat (get_chat_info, or an action's answer). */
  onChat: (chat: ChatView) => void
  /** The caller left the chat: it is gone from their list. */
  onLeft: (chatId: string) => void
  onClose: () => void
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })

/**
 * Chat info beside the open conversation (get_chat_info): name, kind, description and member count;
 * the caller's own pin, hide and mute; archiving a private chat or leaving a group or channel; and the
 * members. Escape closes it and focus returns to where it was opened from.
 */
export function ChatPanel({ api, chat, me, fileBrowser, onChat, onLeft, onClose }: ChatPanelProps) {
  const heading = useRef<HTMLHeadingElement>(null)
  const panel = useRef<HTMLElement>(null)
  const [busy, setBusy] = useState(false)
  const [confirmLeave, setConfirmLeave] = useState(false)
  const [error, setError] = useState('')

  useLayoutEffect(() => heading.current?.focus(), [])

  async function refresh() {
    try {
      onChat(await api.getChatInfo(chat.id))
    } catch (failure) {
      if (isFailure(failure, 'ChatNotFound')) onLeft(chat.id)
      else setError(failureText(failure))
    }
  }
  useEffect(() => {
    refresh()
  }, [api, chat.id])

  async function run(action: () => Promise<unknown>) {
    setBusy(true)
    setError('')
    try {
      await action()
    } catch (failure) {
      setError(failureText(failure))
    } finally {
      setBusy(false)
    }
  }

  const setOwn = (fields: { pinned?: boolean; hidden?: boolean } | MuteChange) =>
    run(async () => {
      await api.updateMember(chat.id, fields)
      await refresh()
    })
  const archive = () => run(async () => onChat(await api.archiveChat(chat.id, !chat.archived)))
  const leave = () =>
    run(async () => {
      await api.leaveChat(chat.id)
      onLeft(chat.id)
    })

  // Escape closes the panel when the keyboard is in it or nowhere in particular (a button that was
  // just disabled drops focus to the body); elsewhere, e.g. in the composer, Escape is theirs.
  useEffect(() => {
    function keyDown(event: KeyboardEvent) {
      if (event.key !== 'Escape' || event.defaultPrevented) return
      const focused = document.activeElement
      if (focused && focused !== document.body && !panel.current?.contains(focused)) return
      event.preventDefault()
      onClose()
    }
    document.addEventListener('keydown', keyDown)
    return () => document.removeEventListener('keydown', keyDown)
  }, [onClose])

  const isPrivate = chat.type === ChatType.Private
  return (
    <aside id="chat-panel" class="chat-panel" aria-labelledby="chat-panel-heading" ref={panel}>
      <header class="chat-panel-header">
        <h2 id="chat-panel-heading" tabIndex={-1} ref={heading}>
          Chat info
        </h2>
        <button type="button" class="secondary" aria-label="Close chat info" onClick={onClose}>
          ✕
        </button>
      </header>
      <dl class="chat-facts">
        <dt>Name</dt>
        <dd>{chat.name}</dd>
        <dt>Kind</dt>
        <dd>{chatKind(chat)}</dd>
        {chat.description && (
          <>
            <dt>Description</dt>
            <dd>{chat.description}</dd>
          </>
        )}
        <dt>Members</dt>
        <dd data-testid="member-count">{chat.member_count}</dd>
        <dt>Created</dt>
        <dd>{dateFormat.format(new Date(chat.created))}</dd>
      </dl>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      {fileBrowser && (
        <p class="chat-files-link">
          <Link href={routePath({ name: 'files', chatId: chat.id })}>
            <span aria-hidden="true">🗂️ </span>Files in this chat
          </Link>
        </p>
      )}
      <div class="chat-actions">
        <button type="button" class="secondary" disabled={busy} onClick={() => setOwn({ pinned: !chat.pinned })}>
          {chat.pinned ? 'Unpin chat' : 'Pin chat'}
        </button>
        <button type="button" class="secondary" disabled={busy} onClick={() => setOwn({ hidden: !chat.hidden })}>
          {chat.hidden ? 'Show in chat list' : 'Hide from chat list'}
        </button>
        <MuteControl chat={chat} busy={busy} onChange={setOwn} />
        {isPrivate && (
          <button type="button" class="secondary" disabled={busy} onClick={archive}>
            {chat.archived ? 'Unarchive chat' : 'Archive chat'}
          </button>
        )}
        {!isPrivate &&
          (confirmLeave ? (
            <fieldset class="confirm">
              <legend>Leave this chat?</legend>
              <button type="button" class="danger" disabled={busy} onClick={leave}>
                Leave
              </button>
              <button type="button" class="secondary" onClick={() => setConfirmLeave(false)}>
                Stay
              </button>
            </fieldset>
          ) : (
            <button type="button" class="danger" disabled={busy} onClick={() => setConfirmLeave(true)}>
              Leave chat
            </button>
          ))}
      </div>
      <MembersPanel api={api} chat={chat} me={me} onChanged={refresh} />
    </aside>
  )
}
