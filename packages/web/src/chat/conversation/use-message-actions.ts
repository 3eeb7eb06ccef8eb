import { useState } from 'preact/hooks'
import type { UserView } from '../../api/auth-api.ts'
import type { ChatApi } from '../../api/chat-api.ts'
import type { ChatView, MessageView } from '../../api/chat-types.ts'
import { failureText } from '../../api/envelope.ts'
import type { BroadcastEvent } from '../../live-events.ts'
import type { MessageActionHandlers } from '../actions/message-actions.tsx'
import { senderName } from '../message/names.ts'
import type { ComposerContext, OutgoingFiles } from './composer.tsx'
import type { ConversationAction } from './conversation-state.ts'
import { messageLink } from './message-link.ts'

interface MessageActionsOptions {
  api: ChatApi
  chat: ChatView
  me: UserView
  dispatch: (action: ConversationAction) => void
  onError: (text: string) => void
  /** Says something that went well (a copied link) on the conversation's notice line. */
  onNotice: (text: string) => void
  jumpTo: (messageId: string) => void
}

/**
 * The open conversation's side of the message actions: it calls the chat module and puts the
 * message views it answers into the conversation, so the change shows before its live event arrives
 * (the event then changes nothing). Reply and edit go through the composer, forward through its dialog.
 */
export function useMessageActions({ api, chat, me, dispatch, onError, onNotice, jumpTo }: MessageActionsOptions) {
  const [actionsFor, setActionsFor] = useState<string>()
  const [composerContext, setComposerContext] = useState<ComposerContext>()
  const [forwarding, setForwarding] = useState<MessageView>()

  /** Applies a change the way its live event would, for the reply previews that quote the message. */
  function echo(type: string, data: Record<string, unknown>) {
    const event: BroadcastEvent = { module: 'chat', tick: 0, type, data: { chat_id: chat.id, ...data } }
    dispatch({ type: 'event', event, me: me.crmId })
  }

  async function call(request: () => Promise<MessageView>) {
    try {
      const view = await request()
      dispatch({ type: 'newer', messages: [view] })
      return view
    } catch (failure) {
      onError(failureText(failure))
      return undefined
    }
  }

  const handlers: MessageActionHandlers = {
    reply: (message) => setComposerContext({ kind: 'reply', message, sender: senderName(message.owner, chat, me) }),
    edit: (message) => setComposerContext({ kind: 'edit', message }),
    async remove(message) {
      if (composerContext?.message.id === message.id) setComposerContext(undefined)
      const view = await call(() => api.softDeleteMessage(message.id))
      if (view) echo('MessageDeleted', { message_id: view.id, hard: false })
    },
    togglePin: (message) => call(() => (message.pinned ? api.unpinMessage(message.id) : api.pinMessage(message.id))),
    forward: (message) => setForwarding(message),
    react: (message, emoji) => call(async () => (await api.toggleReaction(message.id, emoji)).message),
    async copyLink(message) {
      const link = messageLink(message)
      try {
        await navigator.clipboard.writeText(link)
        onNotice('Link to the message copied.')
      } catch {
        // No clipboard here (a browser that refuses it): the link to copy by hand.
        onNotice(`Link to the message: ${link}`)
      }
    },
    showActions: setActionsFor,
    jumpTo,
  }

  /**
   * Sends the composer's text: a new message, a reply to the quoted one, or the edit. With files,
   * one message per file, the text as the first one's caption (and the reply the first one's).
   */
  async function send(text: string, files?: OutgoingFiles) {
    const context = composerContext
    try {
      if (files && context?.kind !== 'edit') {
        const replyTo = context?.kind === 'reply' ? context.message.id : undefined
        for (const [index, file] of files.items.entries()) {
          const view = await api.sendFile(
            chat.id,
            index === 0 ? text : '',
            file.token,
            index === 0 ? replyTo : undefined,
          )
          files.sent(file.key)
          dispatch({ type: 'newer', messages: [view] })
          if (index === 0) setComposerContext(undefined)
        }
      } else if (context?.kind === 'edit') {
        const view = await api.editMessage(context.message.id, text)
        dispatch({ type: 'newer', messages: [view] })
        echo('MessageEdited', { message_id: view.id, content: view.content })
      } else {
        const view = context
          ? await api.sendReply(chat.id, text, context.message.id)
          : await api.sendMessage(chat.id, text)
        dispatch({ type: 'newer', messages: [view] })
      }
      setComposerContext(undefined)
    } catch (failure) {
      throw new Error(failureText(failure))
    }
  }

  return {
    handlers,
    actionsFor,
    composerContext,
    cancelComposerContext: () => setComposerContext(undefined),
    forwarding,
    closeForward: () => setForwarding(undefined),
    send,
  }
}
