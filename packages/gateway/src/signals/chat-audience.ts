import { ApiError, signedHeaders } from '@atrium/platform'
import type { ModuleInstances } from '../proxy/module-instances.ts'

/** The most members a chat may have for typing and presence to be shown in it. */
export const MAX_AUDIENCE = 500

export interface ChatAudienceOptions {
  /** The chat module's instances (Modules.chat); undefined when there is none. */
  chat: ModuleInstances | undefined
  serviceSecret: string
  timeoutMs: number
}

/**
 * The members of a chat, read from the chat module (`GET /private/v1/get_chat_members`, signed as
 * the gateway) at every call, so a member who was removed is refused at once. A chat with more
 * than MAX_AUDIENCE members is refused: typing and presence are for conversations, not channels.
 */
export function createChatAudience({ chat, serviceSecret, timeoutMs }: ChatAudienceOptions) {
  /** The members of the chat, when `crmId` is one of them; ChatNotFound otherwise (a non-member learns nothing). */
  return async function membersFor(chatId: string, crmId: number): Promise<number[]> {
    if (!chat) throw new ApiError('NotFound', 'no chat module is configured')
    const url = `${chat.url.replace(/\/+$/, '')}/private/v1/get_chat_members?chat_id=${chatId}&limit=${MAX_AUDIENCE}`
    const response = await chat.fetch(url, {
      headers: signedHeaders(serviceSecret, 'GET', url),
      signal: AbortSignal.timeout(timeoutMs),
    })
    const envelope = (await response.json().catch(() => ({}))) as {
      result?: { members?: { member: string }[]; has_more?: boolean }
    }
    if (response.status === 404) throw new ApiError('ChatNotFound', `chat ${chatId} not found`)
    if (response.status !== 200 || !envelope.result?.members) {
      throw new ApiError('BadGateway', `the chat module answered ${response.status}`)
    }
    const members = envelope.result.members.map(({ member }) => Number(member))
    if (!members.includes(crmId)) throw new ApiError('ChatNotFound', `chat ${chatId} not found`)
    if (envelope.result.has_more) {
      throw new ApiError('WrongChatType', `typing and presence are shown in chats of at most ${MAX_AUDIENCE} members`)
    }
    return members
  }
}

export type ChatAudience = ReturnType<typeof createChatAudience>
