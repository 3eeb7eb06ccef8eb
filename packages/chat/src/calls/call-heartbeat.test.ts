import assert from 'node:assert/strict'
import { forEachDialect, until } from '@atrium/platform/testing'
import { ANSWER_SDP, initiate, privateChat, startCalls } from '../../test/calls.ts'
import type { ChatClient } from '../../test/support.ts'

/** The call as the history of `member` shows it. */
async function callOf(chat: ChatClient, member: number, callId: string) {
  const { calls } = await chat.user(member).read('call/history', {})
  return calls.find((call: { call_id: string }) => call.call_id === callId)
}

async function untilEnded(chat: ChatClient, callId: string) {
  await until(async () => (await callOf(chat, 1, callId))?.state === 'ended', `call ${callId} to end`)
  return callOf(chat, 1, callId)
}

forEachDialect('a call nobody answers ends as missed after the ring time', async (t, dialect) => {
  const { chat, clock } = await startCalls(t, dialect, { RingSeconds: 30, StaleSeconds: 60 })
  const chatId = await privateChat(chat, 1, 2)
  const { call_id } = await initiate(chat.user(1), chatId)
  // Kept alive, but unanswered: still ringing just before the ring time.
  clock.offsetMs += 25_000
  await chat.user(1).ok('call/send_signal', { call_id, type: 'keepalive' })
  // Two sweeps later nothing has changed.
  await new Promise((resolve) => setTimeout(resolve, 100))
  assert.equal((await callOf(chat, 1, call_id)).state, 'ringing')
  clock.offsetMs += 6_000
  const ended = await untilEnded(chat, call_id)
  assert.deepEqual([ended.end_reason, ended.duration, ended.answered_at], ['missed', 0, ''])
  // The lines are free again.
  assert.equal((await initiate(chat.user(2), chatId)).state, 'ringing')
})

forEachDialect('a ringing call whose caller went silent ends as cancelled', async (t, dialect) => {
  const { chat, clock } = await startCalls(t, dialect, { RingSeconds: 60, StaleSeconds: 20 })
  const chatId = await privateChat(chat, 1, 2)
  const { call_id } = await initiate(chat.user(1), chatId)
  clock.offsetMs += 21_000
  assert.equal((await untilEnded(chat, call_id)).end_reason, 'cancelled')
})

forEachDialect('the server heartbeat ends a connected call a participant stopped keeping alive', async (t, dialect) => {
  const { chat, clock } = await startCalls(t, dialect, { RingSeconds: 30, StaleSeconds: 20 })
  const chatId = await privateChat(chat, 1, 2)
  const { call_id } = await initiate(chat.user(1), chatId)
  await chat.user(2).ok('call/answer', { call_id, sdp: ANSWER_SDP })
  // Both keep it alive for a while: it stays connected past the silence limit measured from the answer.
  for (let step = 0; step < 3; step++) {
    clock.offsetMs += 15_000
    await chat.user(1).ok('call/send_signal', { call_id, type: 'keepalive' })
    await chat.user(2).ok('call/send_signal', { call_id, type: 'keepalive' })
  }
  await new Promise((resolve) => setTimeout(resolve, 100))
  assert.equal((await callOf(chat, 1, call_id)).state, 'connected')
  // Then person 2's tab is gone: only person 1 keeps it alive.
  clock.offsetMs += 15_000
  await chat.user(1).ok('call/send_signal', { call_id, type: 'keepalive' })
  clock.offsetMs += 6_000
  const ended = await untilEnded(chat, call_id)
  assert.equal(ended.end_reason, 'failed')
  // Person 2 was last heard 45 s after the answer: the call ended then, not when the heartbeat noticed.
  assert.ok(ended.duration >= 45 && ended.duration <= 46, `duration ${ended.duration}`)
  assert.ok(Math.abs(Date.parse(ended.ended_at) - Date.parse(ended.answered_at) - ended.duration * 1000) < 1000)
})
