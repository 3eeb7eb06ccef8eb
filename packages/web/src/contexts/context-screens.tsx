import type { JSX } from 'preact'
import type { UserView } from '../api/auth-api.ts'
import type { ChatApi } from '../api/chat-api.ts'
import { failureText, isFailure } from '../api/envelope.ts'
import type { EventBus } from '../chat/live/event-bus.ts'
import type { ClientConfig } from '../config/client-config.ts'
import { MessageScreen } from '../screens/message-screen.tsx'
import { FeedbackPage } from './feedback-page.tsx'
import { objectTypeWord, parseObjectType } from './object-types.ts'
import { OpenedChat } from './opened-chat.tsx'
import { SupportEscalations } from './support-escalations.tsx'

interface ContextScreensOptions {
  api: ChatApi
  config: ClientConfig
  /** The signed-in user, if any (the screens are shown signed in only). */
  me: UserView | undefined
  /** The messenger with a chat open. */
  messenger: (chatId: string) => JSX.Element
}

function supportFailure(error: unknown): string {
  if (isFailure(error, 'SupportUnavailable')) {
    return 'Support chat is not set up on this site yet. Please try again later or contact the site by other means.'
  }
  if (isFailure(error, 'Forbidden')) {
    return 'You are on the support team, so you have no support chat of your own: the customers’ support chats are in your chat list.'
  }
  return failureText(error)
}

/**
 * The screens of the client contexts (spec: "Client chat configuration"): /chat/support,
 * /chat/feedback/{type}/{id} and /chat/discuss/{type}/{id}, and the support team's escalations
 * beside the chat list. App decides whether the mode shows each of them.
 */
export function contextScreens({ api, config, me, messenger }: ContextScreensOptions) {
  const inTeam = me !== undefined && config.support.teamCrmIds.includes(me.crmId)
  return {
    support: () => (
      <OpenedChat
        openKey="support"
        open={async () => (await api.openSupportChat()).chat}
        title="Support"
        opening={
          <>
            <p>Opening your support chat…</p>
            {config.support.welcomeMessage && <p>{config.support.welcomeMessage}</p>}
          </>
        }
        failure={supportFailure}
      >
        {messenger}
      </OpenedChat>
    ),

    feedback: ({ type, id }: { type: string; id: string }) => (
      <FeedbackPage key={`${type}/${id}`} api={api} feedback={config.feedback} type={type} id={id} />
    ),

    discussion: ({ type, id }: { type: string; id: string }) => {
      const objectType = parseObjectType(type)
      if (objectType === undefined) {
        return (
          <MessageScreen title="No such discussion">
            <p>
              <code>{type}</code> is not a kind of thing that can be discussed. Check the link you followed.
            </p>
          </MessageScreen>
        )
      }
      return (
        <OpenedChat
          openKey={`${objectType}/${id}`}
          open={async () => (await api.openDiscussion(objectType, id)).chat}
          title={`Discussion of ${objectTypeWord(objectType)} ${id}`}
          opening={<p>Opening the discussion…</p>}
          failure={failureText}
        >
          {messenger}
        </OpenedChat>
      )
    },

    /** The escalation list for members of the support team (the module checks the team again). */
    escalations: inTeam ? (bus: EventBus) => <SupportEscalations api={api} bus={bus} /> : undefined,
  }
}
