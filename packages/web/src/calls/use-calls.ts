import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { failureText, isFailure } from '../api/envelope.ts'
import type { EventBus } from '../chat/live/event-bus.ts'
import type { BroadcastEvent } from '../live-events.ts'
import type { CallApi, CandidateSignal } from './call-api.ts'
import { type CallSession, createCallSession, type SessionView } from './call-session.ts'
import type { CallMedia, CallView } from './call-words.ts'
import type { IceReport } from './ice-report.ts'

/** How long the "Call ended" line stays on the call screen. */
const ENDED_NOTICE_MS = 4000

/** Where the person is with calls. */
export type CallPhase =
  | { kind: 'idle' }
  /** Someone calls: the ring, with what their offer and early candidates said. */
  | { kind: 'incoming'; call: CallView }
  /** This device places a call: media and offer first, then it rings on the other side. */
  | { kind: 'placing'; chatId: string; media: CallMedia }
  /** A call of this device, ringing or connected. */
  | { kind: 'active'; call: CallView }
  | { kind: 'ended'; call: CallView }

export interface CallsOptions {
  api: CallApi
  me: string
  bus: EventBus
  /** Calls are part of the client mode (contexts.calls). */
  enabled: boolean
  /** Sends what ICE gathered to the gateway's STUN diagnostics; absent for guests, who have no session. */
  reportIce?: (report: IceReport) => Promise<unknown>
  /** Whether the live stream is up: each time this changes, a ringing call is asked for (call/active). */
  live: boolean
}

/** The signals of a call that arrived before this device took it (the offer, trickled candidates). */
interface Early {
  offer?: string
  candidates: CandidateSignal[]
}

function callOf(data: Record<string, unknown>): CallView {
  return data as unknown as CallView
}

/**
 * The person's calls in the messenger: the ring of an incoming call (whatever chat is open), the
 * call this device places or takes, the signals of the live stream routed to it, and the end of
 * it — by either side, the server heartbeat, or this page going away (pagehide).
 */
export function useCalls({ api, me, bus, enabled, reportIce, live }: CallsOptions) {
  const [phase, setPhase] = useState<CallPhase>({ kind: 'idle' })
  const [view, setView] = useState<SessionView>()
  const [error, setError] = useState('')
  const session = useRef<CallSession | undefined>(undefined)
  const early = useRef(new Map<string, Early>())
  const current = useRef(phase)
  current.current = phase

  function finish(call: CallView) {
    session.current?.close()
    session.current = undefined
    early.current.delete(call.call_id)
    setPhase({ kind: 'ended', call })
    setTimeout(() => {
      if (current.current.kind === 'ended' && current.current.call.call_id === call.call_id) setPhase({ kind: 'idle' })
    }, ENDED_NOTICE_MS)
  }

  function openSession(media: CallMedia): CallSession {
    const created = createCallSession({
      api,
      media,
      reportIce,
      onChange: setView,
      onFailed: () => {
        const id = created.callId
        if (id) api.end(id, true).catch(() => {})
      },
    })
    session.current = created
    return created
  }

  /**
   * Rings for the call that call/active says rings for this person now, with its offer. Its
   * answer, not a CallUpdated event, decides: an event may be replayed after a reconnect, of a
   * ring that ended while the page was offline.
   */
  function ringIfRinging(): Promise<void> {
    return api.active().then(({ call, offer }) => {
      if (call?.state !== 'ringing' || call.callee !== me || !offer) return
      if (!canRing()) return
      const stored = early.current.get(call.call_id) ?? { candidates: [] }
      early.current.set(call.call_id, { ...stored, offer })
      setPhase({ kind: 'incoming', call })
    })
  }

  /** Whether a ring may take the screen: no call of this device is on it. */
  function canRing(): boolean {
    return current.current.kind === 'idle' || current.current.kind === 'ended'
  }

  function onEvent(event: BroadcastEvent | 'resync') {
    if (event === 'resync' || event.module !== 'chat') return
    const now = current.current
    if (event.type === 'CallSignal') {
      const data = event.data as { call_id: string; type: string; sdp?: string; candidate?: CandidateSignal }
      if (session.current && session.current.callId === data.call_id) {
        session.current.signal(data).catch((failure) => console.warn('call signal:', failure))
        return
      }
      const stored = early.current.get(data.call_id) ?? { candidates: [] }
      if (data.type === 'offer') stored.offer = data.sdp
      if (data.type === 'candidate' && data.candidate) stored.candidates.push(data.candidate)
      early.current.set(data.call_id, stored)
      return
    }
    if (event.type !== 'CallUpdated') return
    const call = callOf(event.data)
    const mine = (now.kind === 'active' || now.kind === 'incoming') && now.call.call_id === call.call_id
    if (call.state === 'ringing' && call.callee === me && canRing()) {
      // Asked rather than rung at once; should the question fail, the event rings.
      ringIfRinging().catch(() => {
        if (canRing()) setPhase({ kind: 'incoming', call })
      })
    } else if (mine && call.state === 'ended') finish(call)
    else if (mine && now.kind === 'active') setPhase({ kind: 'active', call })
    // Answered on another device of this person: this one stops ringing.
    else if (mine && now.kind === 'incoming' && call.state === 'connected') setPhase({ kind: 'idle' })
  }

  useEffect(() => (enabled ? bus.subscribe(onEvent) : undefined), [bus, enabled, me])

  // A call that began ringing before the stream was up (a reload, a tab opened from a notification,
  // a stream that was down) rings here too: the offer comes from call/active. The question is asked
  // when the page opens and again each time the stream comes up: a stream that starts fresh (the
  // guest page's) replays nothing, so a ring that began while it was connecting comes only from
  // here. A stream going down asks nothing: after a sign-out the question would only meet a
  // revoked session.
  const opened = useRef(false)
  useEffect(() => {
    if (!enabled || (opened.current && !live)) return
    opened.current = true
    ringIfRinging().catch(() => {})
  }, [api, enabled, me, live])

  // Leaving the page ends the call at once, instead of leaving the other side to the heartbeat.
  useEffect(() => {
    const leave = () => {
      const now = current.current
      if (now.kind === 'active') api.endOnLeave(now.call.call_id)
    }
    window.addEventListener('pagehide', leave)
    return () => window.removeEventListener('pagehide', leave)
  }, [api])

  useEffect(() => () => session.current?.close(), [])

  const actions = useMemo(
    () => ({
      /** Calls the other person of a private chat. */
      async start(chatId: string, media: CallMedia) {
        if (current.current.kind === 'active' || current.current.kind === 'placing') return
        setError('')
        setView(undefined)
        setPhase({ kind: 'placing', chatId, media })
        const placing = openSession(media)
        try {
          const call = await placing.place(chatId)
          // The call's own CallUpdated may have moved the phase on already.
          if ((current.current as CallPhase).kind !== 'placing') return
          if (call.state === 'ended') finish(call)
          else setPhase({ kind: 'active', call })
        } catch (failure) {
          placing.close()
          session.current = undefined
          setPhase({ kind: 'idle' })
          setError(callFailureText(failure))
        }
      },

      /** Takes the ringing call, with video when `video` and the call offers it. */
      async accept() {
        const now = current.current
        if (now.kind !== 'incoming') return
        const stored = early.current.get(now.call.call_id)
        if (!stored?.offer) {
          setError('The call could not be taken: its connection details did not arrive. Ask them to call again.')
          return
        }
        setError('')
        setView(undefined)
        setPhase({ kind: 'active', call: now.call })
        const taking = openSession(now.call.media)
        for (const candidate of stored.candidates) taking.signal({ type: 'candidate', candidate }).catch(() => {})
        early.current.delete(now.call.call_id)
        try {
          await taking.accept(now.call.call_id, stored.offer)
        } catch (failure) {
          taking.close()
          session.current = undefined
          setPhase({ kind: 'idle' })
          setError(callFailureText(failure))
          api.end(now.call.call_id, true).catch(() => {})
        }
      },

      async decline() {
        const now = current.current
        if (now.kind !== 'incoming') return
        setPhase({ kind: 'idle' })
        await api.reject(now.call.call_id).catch(() => {})
      },

      async hangUp() {
        const now = current.current
        const id = now.kind === 'active' ? now.call.call_id : session.current?.callId
        if (!id) return
        try {
          finish((await api.end(id)).call)
        } catch (failure) {
          // Ended meanwhile by the other side or the heartbeat: the CallUpdated event says how.
          if (!isFailure(failure, 'CallStateConflict')) setError(failureText(failure))
        }
      },

      dismissError: () => setError(''),
    }),
    [api, me],
  )

  // The placed call's own CallUpdated may come before initiate answers: take the id from either.
  useEffect(() => {
    if (phase.kind !== 'placing') return
    return bus.subscribe((event) => {
      if (event === 'resync' || event.type !== 'CallUpdated') return
      const call = callOf(event.data)
      if (call.caller !== me || current.current.kind !== 'placing') return
      if (call.state === 'ended') finish(call)
      else setPhase({ kind: 'active', call })
    })
  }, [phase.kind, bus, me])

  return { phase, view, error, session: session.current, ...actions }
}

/** What went wrong placing or taking a call, in the person's words. */
function callFailureText(failure: unknown): string {
  if (failure instanceof DOMException && (failure.name === 'NotAllowedError' || failure.name === 'NotFoundError')) {
    return 'The microphone is not available: allow this site to use it in the browser and try again.'
  }
  if (isFailure(failure, 'AlreadyInCall')) return 'You are already in a call. End it before starting another.'
  if (isFailure(failure, 'GuestNotAllowed')) return 'Calls are not available in this conversation.'
  if (isFailure(failure, 'CallStateConflict')) return 'The call has already ended.'
  return failureText(failure)
}

export type Calls = ReturnType<typeof useCalls>
