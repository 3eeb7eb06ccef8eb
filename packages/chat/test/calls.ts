import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import type { DatabaseDialect, EventBatch } from '@atrium/platform'
import { createTestDatabaseUrl, listen } from '@atrium/platform/testing'
import { buildChat } from '../src/app.ts'
import { loadChatConfig } from '../src/config.ts'
import { type ChatCaller, type ChatClient, createChatClient, SERVICE_SECRET } from './support.ts'

/** A minimal SDP offer as a browser would send it; the chat module passes it on untouched. */
export const OFFER_SDP =
  'v=0\r\no=- 4611731400430051336 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n'
export const ANSWER_SDP = OFFER_SDP.replace('4611731400430051336', '5611731400430051336')

/**
 * The chat module with call settings for tests (a fast heartbeat) and a clock the test moves, so
 * ring timeouts and silence happen without waiting.
 */
export async function startCalls(t: TestContext, dialect: DatabaseDialect, calls: Record<string, unknown> = {}) {
  const clock = { offsetMs: 0 }
  const config = loadChatConfig(
    {
      ChatDB: await createTestDatabaseUrl(t, dialect),
      ServiceSecret: SERVICE_SECRET,
      Calls: { RingSeconds: 30, StaleSeconds: 20, SweepMs: 20, ...calls },
    },
    {},
  )
  const app = await buildChat(config, { logger: { level: 'error' }, now: () => Date.now() + clock.offsetMs })
  return { chat: createChatClient(await listen(t, app)), clock }
}

/** Registers two people and opens their private chat; returns its id. */
export async function privateChat(chat: ChatClient, a: number, b: number): Promise<string> {
  await chat.register([a, `Person ${a}`], [b, `Person ${b}`])
  return (await chat.user(a).ok('create_private_chat', { peer: String(b) })).chat.id
}

/** Places a call from `caller` in `chatId`; returns the call view. */
export async function initiate(caller: ChatCaller, chatId: string, media: 'audio' | 'video' = 'audio') {
  return (await caller.ok('call/initiate', { chat_id: chatId, media, sdp: OFFER_SDP })).call
}

/** The call events (CallUpdated, CallSignal) the member's subject receives, oldest first. */
export async function callEvents(chat: ChatClient, member: number) {
  const { status, result, error } = await chat.events({ subjects: `user:${member}`, limit: 1000 })
  assert.equal(status, 200, JSON.stringify(error))
  return (result as EventBatch).Events.filter((event) => event.EventType.startsWith('Call'))
}
