import assert from 'node:assert/strict'
import { ChatMessFlags } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { ANSWER_SDP, callEvents, initiate, OFFER_SDP, privateChat, startCalls } from '../../test/calls.ts'
import { createGroup } from '../../test/support.ts'

forEachDialect('a call rings, is answered and ended, with its duration on its message row', async (t, dialect) => {
  // No heartbeat sweep during the test: the clock moved 151 s on would make it end the call first.
  const { chat, clock } = await startCalls(t, dialect, { SweepMs: 60_000 })
  const chatId = await privateChat(chat, 1, 2)
  const ringing = await initiate(chat.user(1), chatId, 'video')
  assert.deepEqual(
    { ...ringing, call_id: undefined, started_at: undefined },
    {
      call_id: undefined,
      chat_id: chatId,
      media: 'video',
      state: 'ringing',
      caller: '1',
      callee: '2',
      started_at: undefined,
      answered_at: '',
      ended_at: '',
      duration: 0,
      end_reason: '',
    },
  )
  const answered = await chat.user(2).ok('call/answer', { call_id: ringing.call_id, sdp: ANSWER_SDP })
  assert.equal(answered.call.state, 'connected')
  assert.ok(answered.keepalive_seconds > 0 && answered.keepalive_seconds < 20)
  clock.offsetMs += 151_000
  const { call } = await chat.user(1).ok('call/end', { call_id: ringing.call_id })
  assert.equal(call.state, 'ended')
  assert.equal(call.end_reason, 'completed')
  // 151 s on the moved clock, give or take the real time the test took between answer and end.
  assert.ok(call.duration >= 151 && call.duration <= 153, `duration ${call.duration}`)

  // The call is a message of the chat with the Call flag, its content the call record.
  const { messages } = await chat.user(2).read('get_chat_messages', { chat_id: chatId })
  const row = messages.find((message: { id: string }) => message.id === ringing.call_id)
  assert.equal(row.flags & ChatMessFlags.Call, ChatMessFlags.Call)
  assert.deepEqual(JSON.parse(row.content), {
    media: 'video',
    state: 'ended',
    caller: '1',
    callee: '2',
    answered_at: call.answered_at,
    ended_at: call.ended_at,
    duration: call.duration,
    end_reason: 'completed',
  })
  // A call row is no message to pass on.
  const forwarded = await chat.user(1).post('forward_message', { message_id: ringing.call_id, to_chat_id: chatId })
  assert.deepEqual([forwarded.status, forwarded.error?.code], [400, 1000])
  // Both sides were told each state.
  for (const member of [1, 2]) {
    const states = (await callEvents(chat, member))
      .filter((event) => event.EventType === 'CallUpdated')
      .map((event) => event.Data.state)
    assert.deepEqual(states, ['ringing', 'connected', 'ended'])
  }
})

forEachDialect('SDP and ICE candidates go to the other party only', async (t, dialect) => {
  const { chat } = await startCalls(t, dialect)
  const chatId = await privateChat(chat, 1, 2)
  await chat.register(3)
  const { call_id } = await initiate(chat.user(1), chatId)
  const candidate = {
    candidate: 'candidate:1 1 udp 2122260223 127.0.0.1 50000 typ host',
    sdp_mid: '0',
    sdp_mline_index: 0,
  }
  assert.deepEqual(await chat.user(1).ok('call/send_signal', { call_id, type: 'candidate', candidate }), {
    delivered: true,
  })
  await chat.user(2).ok('call/answer', { call_id, sdp: ANSWER_SDP })
  const signals = async (member: number) =>
    (await callEvents(chat, member))
      .filter((event) => event.EventType === 'CallSignal')
      .map((event) => ({
        type: event.Data.type,
        from: event.Data.from,
        sdp: event.Data.sdp,
        candidate: event.Data.candidate,
      }))
  assert.deepEqual(await signals(2), [
    { type: 'offer', from: '1', sdp: OFFER_SDP, candidate: undefined },
    { type: 'candidate', from: '1', sdp: undefined, candidate },
  ])
  assert.deepEqual(await signals(1), [{ type: 'answer', from: '2', sdp: ANSWER_SDP, candidate: undefined }])
  assert.deepEqual(await callEvents(chat, 3), [])
  // A keepalive is a sign of life only: nothing is forwarded.
  assert.deepEqual(await chat.user(2).ok('call/send_signal', { call_id, type: 'keepalive' }), { delivered: false })
  assert.equal((await signals(1)).length, 1)
  // Someone outside the call learns nothing about it.
  const stranger = await chat.user(3).post('call/send_signal', { call_id, type: 'keepalive' })
  assert.deepEqual([stranger.status, stranger.error?.code], [404, 3100])
})

forEachDialect('a renegotiation offer is accepted only on a connected call', async (t, dialect) => {
  const { chat } = await startCalls(t, dialect)
  const chatId = await privateChat(chat, 1, 2)
  const { call_id } = await initiate(chat.user(1), chatId)
  const early = await chat.user(1).post('call/send_signal', { call_id, type: 'offer', sdp: OFFER_SDP })
  assert.deepEqual(
    [early.status, early.error?.code, (early.error?.details as { state?: string } | undefined)?.state],
    [409, 3102, 'ringing'],
  )
  await chat.user(2).ok('call/answer', { call_id, sdp: ANSWER_SDP })
  assert.deepEqual(await chat.user(2).ok('call/send_signal', { call_id, type: 'offer', sdp: OFFER_SDP }), {
    delivered: true,
  })
})

forEachDialect('the callee rejects, the caller cancels, and ended calls refuse further moves', async (t, dialect) => {
  const { chat } = await startCalls(t, dialect)
  const chatId = await privateChat(chat, 1, 2)
  const first = await initiate(chat.user(1), chatId)
  const byCaller = await chat.user(1).post('call/reject', { call_id: first.call_id })
  assert.deepEqual([byCaller.status, byCaller.error?.code], [403, 1009])
  const rejected = (await chat.user(2).ok('call/reject', { call_id: first.call_id })).call
  assert.deepEqual([rejected.state, rejected.end_reason, rejected.duration], ['ended', 'rejected', 0])
  for (const [who, operation, body] of [
    [2, 'call/answer', { call_id: first.call_id, sdp: ANSWER_SDP }],
    [1, 'call/end', { call_id: first.call_id }],
    [1, 'call/send_signal', { call_id: first.call_id, type: 'offer', sdp: OFFER_SDP }],
  ] as const) {
    const response = await chat.user(who).post(operation, body)
    assert.deepEqual([response.status, response.error?.code], [409, 3102], operation)
  }
  // A late candidate or keepalive, sent as the other side hung up, is dropped without an error.
  const signalsTo = async (member: number) =>
    (await callEvents(chat, member)).filter((event) => event.EventType === 'CallSignal').length
  const before = await signalsTo(2)
  for (const body of [
    { call_id: first.call_id, type: 'keepalive' },
    { call_id: first.call_id, type: 'candidate', candidate: { candidate: '', sdp_mid: '0', sdp_mline_index: 0 } },
  ]) {
    assert.deepEqual(await chat.user(1).ok('call/send_signal', body), { delivered: false, ended: true })
  }
  assert.equal(await signalsTo(2), before)
  // The lines are free again: the next call rings, and its caller cancels it.
  const second = await initiate(chat.user(2), chatId)
  const cancelled = (await chat.user(2).ok('call/end', { call_id: second.call_id })).call
  assert.equal(cancelled.end_reason, 'cancelled')
  // Ending while it rings, the callee declines.
  const third = await initiate(chat.user(1), chatId)
  assert.equal((await chat.user(2).ok('call/end', { call_id: third.call_id })).call.end_reason, 'rejected')
  // A connected call the client saw fail ends as failed.
  const fourth = await initiate(chat.user(1), chatId)
  await chat.user(2).ok('call/answer', { call_id: fourth.call_id, sdp: ANSWER_SDP })
  assert.equal((await chat.user(2).ok('call/end', { call_id: fourth.call_id, failed: true })).call.end_reason, 'failed')
})

forEachDialect('a busy person is answered busy, and a caller already in a call is refused', async (t, dialect) => {
  const { chat } = await startCalls(t, dialect)
  const oneTwo = await privateChat(chat, 1, 2)
  const threeTwo = await privateChat(chat, 3, 2)
  const oneThree = await privateChat(chat, 1, 3)
  const active = await initiate(chat.user(1), oneTwo)
  const busy = await initiate(chat.user(3), threeTwo)
  assert.deepEqual([busy.state, busy.end_reason], ['ended', 'busy'])
  // The busy attempt is in the conversation for both, and 3 is free for another call.
  const { messages } = await chat.user(2).read('get_chat_messages', { chat_id: threeTwo })
  assert.equal(JSON.parse(messages.at(-1).content).end_reason, 'busy')
  const again = await chat.user(1).post('call/initiate', { chat_id: oneThree, media: 'audio', sdp: OFFER_SDP })
  assert.deepEqual([again.status, again.error?.code], [409, 3101])
  // Nothing was written for the refused attempt.
  const oneThreeMessages = await chat.user(3).read('get_chat_messages', { chat_id: oneThree })
  assert.deepEqual(oneThreeMessages.messages, [])
  await chat.user(1).ok('call/end', { call_id: active.call_id })
  assert.equal((await initiate(chat.user(3), threeTwo)).state, 'ringing')
})

forEachDialect('parallel calls to one person leave exactly one ringing', async (t, dialect) => {
  const { chat } = await startCalls(t, dialect)
  const callers = [11, 12, 13, 14, 15, 16]
  const chats = await Promise.all(callers.map((caller) => privateChat(chat, caller, 2)))
  // And two people calling each other at once: one call wins.
  const crossing = await privateChat(chat, 21, 22)
  const place = (caller: number, chatId: string) =>
    chat.user(caller).post('call/initiate', { chat_id: chatId, media: 'audio', sdp: OFFER_SDP })
  const results = await Promise.all([
    ...callers.map((caller, i) => place(caller, chats[i]!)),
    place(21, crossing),
    place(22, crossing),
  ])
  const toTwo = results.slice(0, callers.length).map((response) => response.result.call)
  assert.equal(toTwo.filter((call) => call.state === 'ringing').length, 1)
  assert.equal(toTwo.filter((call) => call.end_reason === 'busy').length, callers.length - 1)
  // Of two people calling each other, one rings the other, whose own attempt finds them in that call.
  const crossed = results.slice(callers.length)
  assert.deepEqual(
    crossed.map((response) => response.result?.call.state ?? response.error?.code).sort(),
    [3101, 'ringing'].sort(),
  )
})

forEachDialect('calls are for private chats; an oversized SDP is refused', async (t, dialect) => {
  const { chat } = await startCalls(t, dialect, { MaxSdpLength: 2000 })
  await chat.register(1, 2, 3)
  const group = await createGroup(chat.user(1), [2, 3])
  const inGroup = await chat.user(1).post('call/initiate', { chat_id: group, media: 'audio', sdp: OFFER_SDP })
  assert.deepEqual([inGroup.status, inGroup.error?.code], [409, 3005])
  const chatId = await privateChat(chat, 1, 2)
  const large = await chat.user(1).post('call/initiate', { chat_id: chatId, media: 'audio', sdp: 'a'.repeat(2001) })
  assert.deepEqual([large.status, large.error?.code], [413, 3103])
  const notMember = await chat.user(3).post('call/initiate', { chat_id: chatId, media: 'audio', sdp: OFFER_SDP })
  assert.deepEqual([notMember.status, notMember.error?.code], [404, 3000])
  const nul = await chat.user(1).post('call/initiate', { chat_id: chatId, media: 'audio', sdp: 'v=0\u0000' })
  assert.deepEqual([nul.status, nul.error?.code], [400, 1000])
  const { call_id } = await initiate(chat.user(1), chatId)
  const candidate = { candidate: 'c'.repeat(2049), sdp_mid: '0', sdp_mline_index: 0 }
  const longCandidate = await chat.user(1).post('call/send_signal', { call_id, type: 'candidate', candidate })
  assert.deepEqual([longCandidate.status, longCandidate.error?.code], [400, 1000])
  const mixed = await chat.user(1).post('call/send_signal', { call_id, type: 'keepalive', sdp: OFFER_SDP })
  assert.deepEqual([mixed.status, mixed.error?.code], [400, 1000])
  // A message id that is not a call is no call.
  const text = await chat.user(1).ok('send_message', { chat_id: chatId, content: 'hi' })
  const notCall = await chat.user(2).post('call/answer', { call_id: text.id, sdp: ANSWER_SDP })
  assert.deepEqual([notCall.status, notCall.error?.code], [404, 3100])
})

forEachDialect('guests call only through personal invites', async (t, dialect) => {
  const { chat } = await startCalls(t, dialect)
  await chat.register([1, 'Host'], 2)
  const personal = await chat.user(1).ok('create_invite', { kind: 'personal' })
  const guest = chat.guest(personal.code, 'device-guest-0001')
  const joined = await guest.ok('join_invite', { code: personal.code })
  assert.equal(joined.calls_allowed, true)
  const fromGuest = await initiate(guest, joined.chat.id)
  assert.equal(fromGuest.state, 'ringing')
  assert.equal(
    (await chat.user(1).ok('call/answer', { call_id: fromGuest.call_id, sdp: ANSWER_SDP })).call.state,
    'connected',
  )
  await guest.ok('call/end', { call_id: fromGuest.call_id })
  // The host calls the guest back.
  const toGuest = await initiate(chat.user(1), joined.chat.id)
  assert.equal((await guest.ok('call/answer', { call_id: toGuest.call_id, sdp: ANSWER_SDP })).call.state, 'connected')
  await chat.user(1).ok('call/end', { call_id: toGuest.call_id })

  // A guest of a group invite has no call: not in the group, and not through a private chat.
  const group = await createGroup(chat.user(1), [2])
  const groupInvite = await chat.user(1).ok('create_invite', { kind: 'group', chat_id: group })
  const groupGuest = chat.guest(groupInvite.code, 'device-guest-0002')
  assert.equal((await groupGuest.ok('join_invite', { code: groupInvite.code })).calls_allowed, false)
  const refused = await groupGuest.post('call/initiate', { chat_id: group, media: 'audio', sdp: OFFER_SDP })
  assert.deepEqual([refused.status, refused.error?.code], [403, 3007])
})

forEachDialect('the history lists the caller’s calls newest first with the other person’s name', async (t, dialect) => {
  const { chat } = await startCalls(t, dialect)
  const oneTwo = await privateChat(chat, 1, 2)
  const oneThree = await privateChat(chat, 1, 3)
  const first = await initiate(chat.user(1), oneTwo)
  await chat.user(2).ok('call/reject', { call_id: first.call_id })
  const second = await initiate(chat.user(3), oneThree, 'video')
  await chat.user(3).ok('call/end', { call_id: second.call_id })
  const { calls, has_more } = await chat.user(1).read('call/history', {})
  assert.equal(has_more, false)
  assert.deepEqual(
    calls.map((call: Record<string, string>) => [
      call.call_id,
      call.direction,
      call.peer,
      call.peer_name,
      call.end_reason,
    ]),
    [
      [second.call_id, 'incoming', '3', 'Person 3', 'cancelled'],
      [first.call_id, 'outgoing', '2', 'Person 2', 'rejected'],
    ],
  )
  const page = await chat.user(1).read('call/history', { limit: 1 })
  assert.deepEqual([page.calls.length, page.has_more], [1, true])
  const next = await chat.user(1).read('call/history', { limit: 1, before: page.calls[0].call_id })
  assert.deepEqual(
    next.calls.map((call: { call_id: string }) => call.call_id),
    [first.call_id],
  )
  // Person 2 sees only the call with them.
  const theirs = await chat.user(2).read('call/history', {})
  assert.deepEqual(
    theirs.calls.map((call: { call_id: string }) => call.call_id),
    [first.call_id],
  )
})

forEachDialect('call/active gives a page opened during the ring the call and its offer', async (t, dialect) => {
  const { chat } = await startCalls(t, dialect)
  const chatId = await privateChat(chat, 1, 2)
  await chat.register(3)
  assert.deepEqual((await chat.user(2).read('call/active')).call, null)
  const { call_id } = await initiate(chat.user(1), chatId, 'video')
  const forCallee = await chat.user(2).read('call/active')
  assert.deepEqual([forCallee.call.call_id, forCallee.call.state, forCallee.offer], [call_id, 'ringing', OFFER_SDP])
  // The offer is for the person called; the caller and others get none.
  const forCaller = await chat.user(1).read('call/active')
  assert.deepEqual([forCaller.call.call_id, forCaller.offer], [call_id, ''])
  assert.deepEqual(await chat.user(3).read('call/active'), { ...forCaller, call: null })
  await chat.user(2).ok('call/answer', { call_id, sdp: ANSWER_SDP })
  const connected = await chat.user(2).read('call/active')
  assert.deepEqual([connected.call.state, connected.offer], ['connected', ''])
  await chat.user(2).ok('call/end', { call_id })
  assert.equal((await chat.user(1).read('call/active')).call, null)
})

forEachDialect('a guest follows their calls with call/events, waiting for the next one', async (t, dialect) => {
  const { chat } = await startCalls(t, dialect)
  await chat.register([1, 'Host'])
  const invite = await chat.user(1).ok('create_invite', { kind: 'personal' })
  const guest = chat.guest(invite.code, 'device-guest-0003')
  const joined = await guest.ok('join_invite', { code: invite.code })
  const start = await guest.read('call/events')
  assert.deepEqual(start.events, [])
  // Waiting: the host's call arrives while the request waits.
  const waiting = guest.read('call/events', { since: start.last_tick, wait: 5000 })
  const started = Date.now()
  const { call_id } = await initiate(chat.user(1), joined.chat.id)
  const first = await waiting
  assert.ok(Date.now() - started < 4000, 'answered when the call came, not at the end of the wait')
  const all = [...first.events]
  if (!all.some((event) => event.type === 'CallSignal')) {
    all.push(...(await guest.read('call/events', { since: first.last_tick, wait: 2000 })).events)
  }
  assert.deepEqual(
    all.map((event: { type: string; data: { call_id: string; type?: string } }) => [
      event.type,
      event.data.call_id,
      event.data.type,
    ]),
    [
      ['CallUpdated', call_id, undefined],
      ['CallSignal', call_id, 'offer'],
    ],
  )
  // Nothing else waits there: a wait with nothing new ends empty at its time.
  const quiet = await guest.read('call/events', { since: (await guest.read('call/events')).last_tick, wait: 300 })
  assert.deepEqual(quiet.events, [])
  const refused = await guest.get('call/events', { wait: 60_000 })
  assert.deepEqual([refused.status, refused.error?.code], [400, 1000])
})
