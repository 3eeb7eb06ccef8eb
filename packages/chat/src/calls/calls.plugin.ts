import { ApiError, ChatMessFlags, ChatType, type Service } from '@atrium/platform'
import { type Caller, requireCanPost, requireMember } from '../access.ts'
import type { CallerResolver } from '../caller.ts'
import type { ChatConfig } from '../config.ts'
import { InviteKind } from '../invites/invites.repository.ts'
import { newMessage, postMessage } from '../messages/message-rows.ts'
import type { Store, Unit } from '../store.ts'
import { callEventsRoute } from './call-events.ts'
import { startCallHeartbeat } from './call-heartbeat.ts'
import { type CallMessageContent, endedRecord, ringingRecord, toCallView } from './call-record.ts'
import { endCall, recordCall, requireCall, requireState } from './call-transitions.ts'
import { CallLineState } from './calls.repository.ts'
import {
  activeCall,
  answerCall,
  callHistory,
  endCallSchema,
  initiateCall,
  rejectCall,
  sendSignal,
} from './calls.schema.ts'

/** The chat module's call settings. */
export type CallSettings = ChatConfig['Calls']

export interface CallsPluginOptions {
  store: Store
  resolveCaller: CallerResolver
  calls: CallSettings
  /** The clock ring timeouts and silence are measured against (tests move it instead of waiting). */
  now: () => number
}

/**
 * Refuses calls guests may not make or receive (spec: "Authentication" 7): a guest calls, and is
 * called, only through a personal invite.
 */
async function requireCallsAllowed(unit: Pick<Unit, 'calls'>, caller: Caller, peer?: number): Promise<void> {
  if (caller.guest && (await unit.calls.guestInviteKind(caller.member)) !== InviteKind.Personal) {
    throw new ApiError('GuestNotAllowed', 'guests call only through a personal invite')
  }
  if (peer === undefined) return
  const peerKind = await unit.calls.guestInviteKind(peer)
  if (peerKind !== undefined && peerKind !== InviteKind.Personal) {
    throw new ApiError('GuestNotAllowed', 'guests of a group invite cannot be called')
  }
}

/** call/initiate, answer, reject, end, send_signal, active, history, events; and the heartbeat that ends calls left behind. */
export default async function callsPlugin(app: Service, { store, resolveCaller, calls, now }: CallsPluginOptions) {
  const timing = { keepalive_seconds: Math.max(1, Math.floor(calls.StaleSeconds / 3)), ring_seconds: calls.RingSeconds }

  function requireSdpLength(sdp: string | undefined): void {
    if (sdp !== undefined && sdp.length > calls.MaxSdpLength) {
      throw new ApiError(
        'SignalTooLarge',
        `the SDP is ${sdp.length} characters; at most ${calls.MaxSdpLength} are accepted`,
      )
    }
  }

  app.post('/call/initiate', { schema: initiateCall }, async (request) => {
    const caller = await resolveCaller(request)
    const { chat_id, media, sdp } = request.body
    requireSdpLength(sdp)
    const row = await store.transact(async (unit) => {
      await requireCallsAllowed(unit, caller)
      const access = await requireMember(unit, Number(chat_id), caller)
      if (access.chat.type !== ChatType.Private) throw new ApiError('WrongChatType', 'calls are for private chats')
      requireCanPost(access)
      const others = (await unit.members.list(access.chat.timetick, 0, 3)).filter((m) => m.member !== caller.member)
      if (others.length !== 1) throw new ApiError('WrongChatType', 'this private chat has nobody else to call')
      const peer = others[0]!.member
      await requireCallsAllowed(unit, caller, peer)
      const at = now()
      const row = newMessage(store, access.chat.timetick, caller.member, { flags: ChatMessFlags.Call })
      const line = { call_id: row.timetick, chat_id: row.chat_id, caller: caller.member, state: CallLineState.Ringing }
      const free = await unit.calls.claim([
        { ...line, member: caller.member, peer, since: at, seen: at, offer: '' },
        { ...line, member: peer, peer: caller.member, since: at, seen: at, offer: sdp },
      ])
      if (!free.has(caller.member)) {
        throw new ApiError('AlreadyInCall', 'you are in another call; end it first')
      }
      let record: CallMessageContent = ringingRecord(media, caller.member, peer)
      // The other person is in a call: the attempt is recorded as ended busy, as Telegram shows it.
      if (!free.has(peer)) {
        await unit.calls.release(row.timetick)
        record = endedRecord(record, 'busy', at)
      }
      const call = { ...row, content: JSON.stringify(record) }
      await postMessage(unit, call, access.chat.app_id)
      await unit.emit({
        chat_id: call.chat_id,
        type: 'CallUpdated',
        data: toCallView(call),
        app_id: access.chat.app_id,
      })
      if (record.state === 'ringing') {
        const data = {
          call_id: String(call.timetick),
          chat_id: String(call.chat_id),
          from: String(caller.member),
          type: 'offer',
          sdp,
        }
        await unit.emit({
          chat_id: call.chat_id,
          type: 'CallSignal',
          addressee: peer,
          data,
          app_id: access.chat.app_id,
        })
      }
      return call
    })
    return { call: toCallView(row), ...timing }
  })

  app.post('/call/answer', { schema: answerCall }, async (request) => {
    const caller = await resolveCaller(request)
    const { call_id, sdp } = request.body
    requireSdpLength(sdp)
    const row = await store.transact(async (unit) => {
      const access = await requireCall(unit, Number(call_id), caller)
      if (access.record.callee !== String(caller.member))
        throw new ApiError('Forbidden', 'only the person called answers')
      requireState(access.record, 'ringing', 'answered')
      const at = now()
      if (!(await unit.calls.connect(access.row.timetick, at))) {
        throw new ApiError('CallStateConflict', 'the call ended before it was answered', { state: 'ended' })
      }
      const record = { ...access.record, state: 'connected' as const, answered_at: new Date(at).toISOString() }
      const updated = await recordCall(unit, store, access, record)
      const data = {
        call_id: call_id,
        chat_id: String(updated.chat_id),
        from: String(caller.member),
        type: 'answer',
        sdp,
      }
      await unit.emit({
        chat_id: updated.chat_id,
        type: 'CallSignal',
        addressee: access.peer,
        data,
        app_id: access.appId,
      })
      return updated
    })
    return { call: toCallView(row), ...timing }
  })

  app.post('/call/reject', { schema: rejectCall }, async (request) => {
    const caller = await resolveCaller(request)
    const row = await store.transact(async (unit) => {
      const access = await requireCall(unit, Number(request.body.call_id), caller)
      if (access.record.callee !== String(caller.member)) {
        throw new ApiError('Forbidden', 'only the person called rejects; the caller ends the call')
      }
      requireState(access.record, 'ringing', 'rejected')
      const ended = await endCall(
        unit,
        store,
        { callId: access.row.timetick, appId: access.appId },
        () => 'rejected',
        now(),
      )
      if (!ended) throw new ApiError('CallStateConflict', 'the call has ended', { state: 'ended' })
      return ended
    })
    return { call: toCallView(row) }
  })

  app.post('/call/end', { schema: endCallSchema }, async (request) => {
    const caller = await resolveCaller(request)
    const me = String(caller.member)
    const row = await store.transact(async (unit) => {
      const access = await requireCall(unit, Number(request.body.call_id), caller)
      if (access.record.state === 'ended') requireState(access.record, 'connected', 'ended')
      const reasonFor = (record: CallMessageContent) => {
        if (record.state === 'connected') return request.body.failed ? 'failed' : 'completed'
        return record.caller === me ? 'cancelled' : 'rejected'
      }
      const ended = await endCall(unit, store, { callId: access.row.timetick, appId: access.appId }, reasonFor, now())
      if (!ended) throw new ApiError('CallStateConflict', 'the call has ended', { state: 'ended' })
      return ended
    })
    return { call: toCallView(row) }
  })

  app.post('/call/send_signal', { schema: sendSignal }, async (request) => {
    const caller = await resolveCaller(request)
    const { call_id, type, sdp, candidate } = request.body
    if ((type === 'offer' || type === 'answer') !== (sdp !== undefined)) {
      throw new ApiError('InvalidRequest', 'offer and answer carry sdp, and only they do')
    }
    if ((type === 'candidate') !== (candidate !== undefined)) {
      throw new ApiError('InvalidRequest', 'a candidate signal carries candidate, and only it does')
    }
    requireSdpLength(sdp)
    return store.transact(async (unit) => {
      const access = await requireCall(unit, Number(call_id), caller)
      const line = await unit.calls.line(caller.member)
      if (!line || line.call_id !== access.row.timetick) {
        // A candidate gathered or a keepalive timed just as the other side hung up is normal in a
        // call's last moments: it is dropped, and `ended` tells the sender. A renegotiation is not.
        if (sdp === undefined) return { delivered: false, ended: true }
        throw new ApiError('CallStateConflict', 'the call has ended', { state: 'ended' })
      }
      // A renegotiation (camera added, ICE restart) needs a connected call; a ringing call's offer
      // and answer travel with initiate and answer.
      if (sdp !== undefined && line.state !== CallLineState.Connected)
        requireState(access.record, 'connected', 'renegotiated')
      await unit.calls.touch(caller.member, access.row.timetick, now())
      if (type === 'keepalive') return { delivered: false }
      const data = {
        call_id,
        chat_id: String(access.row.chat_id),
        from: String(caller.member),
        type,
        ...(sdp === undefined ? {} : { sdp }),
        ...(candidate === undefined ? {} : { candidate }),
      }
      await unit.emit({
        chat_id: access.row.chat_id,
        type: 'CallSignal',
        addressee: access.peer,
        data,
        app_id: access.appId,
      })
      return { delivered: true }
    })
  })

  app.get('/call/active', { schema: activeCall }, async (request) => {
    const caller = await resolveCaller(request)
    const line = await store.calls.line(caller.member)
    const row = line && (await store.messages.find(line.call_id))
    if (!line || !row) return { call: null, offer: '', ...timing }
    return { call: toCallView(row), offer: line.offer, ...timing }
  })

  app.get('/call/history', { schema: callHistory }, async (request) => {
    const caller = await resolveCaller(request)
    const { before, limit } = request.query
    const rows = await store.calls.history(
      caller.member,
      before === undefined ? Number.MAX_SAFE_INTEGER : Number(before),
      limit + 1,
    )
    const me = String(caller.member)
    const views = rows.slice(0, limit).map((row) => {
      const view = toCallView(row)
      const outgoing = view.caller === me
      return {
        ...view,
        direction: outgoing ? ('outgoing' as const) : ('incoming' as const),
        peer: outgoing ? view.callee : view.caller,
      }
    })
    const names = await store.profiles.names(views.map((view) => Number(view.peer)))
    return {
      calls: views.map((view) => ({ ...view, peer_name: names.get(Number(view.peer)) ?? '' })),
      has_more: rows.length > limit,
    }
  })

  callEventsRoute(app, { store, resolveCaller })
  startCallHeartbeat(app, { store, calls, now })
}
