import { useEffect, useRef, useState } from 'preact/hooks'
import { Avatar } from '../people/avatar.tsx'
import type { SessionView } from './call-session.ts'
import { type CallView, callSummary, formatDuration, spokenDuration } from './call-words.ts'
import { startRingTone } from './ring-tone.ts'
import type { Calls } from './use-calls.ts'

interface CallScreenProps {
  calls: Calls
  me: string
  /** The name a person is shown by (their private chat's name, a known display name). */
  nameOf: (id: string) => string
}

/** A <video> showing `stream`; the local preview is muted so nobody hears themself. */
function StreamVideo({ stream, muted, label }: { stream: MediaStream; muted: boolean; label: string }) {
  const video = useRef<HTMLVideoElement>(null)
  useEffect(() => {
    if (video.current && video.current.srcObject !== stream) video.current.srcObject = stream
  })
  return <video ref={video} autoplay playsInline muted={muted} aria-label={label} />
}

/** Seconds since the call was answered, ticking once a second. */
function useElapsed(call: CallView | undefined): number {
  const [now, setNow] = useState(Date.now())
  const answered = call?.answered_at ? Date.parse(call.answered_at) : 0
  useEffect(() => {
    if (!answered) return
    const timer = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(timer)
  }, [answered])
  return answered ? Math.max(0, (now - answered) / 1000) : 0
}

function peerOf(call: CallView, me: string): string {
  return call.caller === me ? call.callee : call.caller
}

/** The controls of a call in progress: mute, camera, camera switch, screen share, end. */
function CallControls({ calls, view }: { calls: Calls; view: SessionView | undefined }) {
  const session = calls.session
  const run = (action: (() => Promise<void>) | undefined) => () => void action?.().catch(() => {})
  return (
    <div class="call-controls">
      <button type="button" class="secondary" aria-pressed={view?.muted ?? false} onClick={() => session?.toggleMute()}>
        {view?.muted ? 'Unmute' : 'Mute'}
      </button>
      <button
        type="button"
        class="secondary"
        aria-pressed={view?.cameraOn ?? false}
        disabled={!session}
        onClick={run(session?.toggleCamera)}
      >
        {view?.cameraOn ? 'Camera off' : 'Camera on'}
      </button>
      <button
        type="button"
        class="secondary"
        disabled={!session || (view?.cameras ?? 0) < 2 || !view?.cameraOn}
        title={(view?.cameras ?? 0) < 2 ? 'This device has one camera' : undefined}
        onClick={run(session?.switchCamera)}
      >
        Switch camera
      </button>
      <button
        type="button"
        class="secondary"
        aria-pressed={view?.sharing ?? false}
        disabled={!session || !navigator.mediaDevices?.getDisplayMedia}
        onClick={run(() => session!.toggleScreenShare())}
      >
        {view?.sharing ? 'Stop sharing' : 'Share screen'}
      </button>
      <button type="button" class="danger" onClick={() => void calls.hangUp()}>
        End call
      </button>
    </div>
  )
}

/**
 * The call layer over the messenger: the incoming ring with Accept and Decline (whatever chat is
 * open), the call in progress with its pictures, controls and quality hint, and a short "Call
 * ended" line with how it went.
 */
export function CallScreen({ calls, me, nameOf }: CallScreenProps) {
  const { phase, view, error } = calls
  const active = phase.kind === 'active' ? phase.call : undefined
  const elapsed = useElapsed(active?.state === 'connected' ? active : undefined)
  const accept = useRef<HTMLButtonElement>(null)
  const ringing = phase.kind === 'incoming' ? phase.call.call_id : ''
  useEffect(() => {
    if (!ringing) return
    accept.current?.focus()
    return startRingTone()
  }, [ringing])

  if (error) {
    return (
      <div class="call-layer call-notice" role="alert">
        <p>{error}</p>
        <button type="button" class="secondary" onClick={calls.dismissError}>
          Dismiss
        </button>
      </div>
    )
  }
  if (phase.kind === 'idle') return null
  if (phase.kind === 'incoming') {
    const caller = nameOf(phase.call.caller)
    const kind = phase.call.media === 'video' ? 'Video call' : 'Audio call'
    return (
      <div class="call-layer call-incoming" role="alertdialog" aria-labelledby="call-incoming-title">
        <Avatar id={phase.call.caller} name={caller} />
        <div>
          <h2 id="call-incoming-title">{caller} is calling</h2>
          <p>{kind}</p>
        </div>
        <div class="call-controls">
          <button type="button" ref={accept} onClick={() => void calls.accept()}>
            Accept
          </button>
          <button type="button" class="danger" onClick={() => void calls.decline()}>
            Decline
          </button>
        </div>
      </div>
    )
  }
  if (phase.kind === 'ended') {
    return (
      <div class="call-layer call-notice" role="status">
        <p>
          Call ended · {callSummary(phase.call, me)}
          {phase.call.duration > 0 && <span class="visually-hidden"> ({spokenDuration(phase.call.duration)})</span>}
        </p>
      </div>
    )
  }
  const peerName = active ? nameOf(peerOf(active, me)) : ''
  const status =
    phase.kind === 'placing'
      ? 'Starting the call…'
      : active?.state === 'ringing'
        ? 'Ringing…'
        : view?.connection === 'connected'
          ? formatDuration(elapsed)
          : 'Connecting…'
  const remoteVideo = (view?.remoteStream.getVideoTracks().length ?? 0) > 0
  const localVideo = view?.localStream && view.cameraOn
  return (
    <section class="call-layer call-active" aria-label={peerName ? `Call with ${peerName}` : 'Call'}>
      <div class="call-stage">
        {view && remoteVideo ? (
          <StreamVideo stream={view.remoteStream} muted={false} label={`${peerName}'s video`} />
        ) : (
          <>
            {active && <Avatar id={peerOf(active, me)} name={peerName} />}
            {/* The other side's sound plays from an element of its own when there is no picture. */}
            {view && <StreamVideo stream={view.remoteStream} muted={false} label={`${peerName}'s audio`} />}
          </>
        )}
        {localVideo && view?.localStream && (
          <div class="call-self">
            <StreamVideo stream={view.localStream} muted label="Your camera" />
          </div>
        )}
      </div>
      <div class="call-info">
        <h2>{peerName || 'Call'}</h2>
        <p class="call-status" aria-live="polite">
          {status}
        </p>
        {view?.quality.text && (
          <p class={`call-quality quality-${view.quality.level}`} role="status">
            {view.quality.text}
          </p>
        )}
        {view?.audioOnly && <p class="call-quality">{view.audioOnly}</p>}
      </div>
      <CallControls calls={calls} view={view} />
    </section>
  )
}
