import type { CallApi, CandidateSignal, IceConfig } from './call-api.ts'
import { type QualityHint, qualityHint, type StatsSample, sampleOf, shouldFallBackToAudio } from './call-quality.ts'
import type { CallMedia, CallView } from './call-words.ts'
import { createIceGatheringLog, type IceReport } from './ice-report.ts'

/** How often the call's link is measured for the quality hint. */
const STATS_MS = 2000

/** What the call screen shows of a session; a new object after every change. */
export interface SessionView {
  localStream: MediaStream | undefined
  remoteStream: MediaStream
  connection: RTCPeerConnectionState | 'new'
  muted: boolean
  /** The camera is sending. */
  cameraOn: boolean
  /** How many cameras the device has (switching needs two). */
  cameras: number
  sharing: boolean
  quality: QualityHint
  /** Why the call is audio only, '' when it is not. */
  audioOnly: string
}

export interface CallSessionOptions {
  api: CallApi
  media: CallMedia
  onChange: (view: SessionView) => void
  /** The connection failed for good (ICE failed): the call should end as failed. */
  onFailed: () => void
  /** Sends what ICE gathered to the gateway's STUN diagnostics (signed-in people only). */
  reportIce?: (report: IceReport) => Promise<unknown>
}

/** Microphone, and the camera when wanted and present; without a camera the call goes on as audio only. */
async function openLocalMedia(wantVideo: boolean): Promise<{ stream: MediaStream; audioOnly: string }> {
  if (wantVideo) {
    try {
      return { stream: await navigator.mediaDevices.getUserMedia({ audio: true, video: true }), audioOnly: '' }
    } catch {
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true })
      return { stream, audioOnly: 'No camera is available: the call is audio only.' }
    }
  }
  return { stream: await navigator.mediaDevices.getUserMedia({ audio: true }), audioOnly: '' }
}

function candidateOf(candidate: RTCIceCandidate | null): CandidateSignal {
  return {
    candidate: candidate?.candidate ?? '',
    sdp_mid: candidate?.sdpMid ?? '0',
    sdp_mline_index: candidate?.sdpMLineIndex ?? 0,
  }
}

/**
 * One side of a 1:1 WebRTC call: the RTCPeerConnection, the local media, the signals exchanged
 * through the call operations (SDP and trickled ICE candidates), renegotiation when video is
 * added, the keepalive the server heartbeat expects, and the quality readings.
 */
export function createCallSession({ api, media, onChange, onFailed, reportIce }: CallSessionOptions) {
  let pc: RTCPeerConnection | undefined
  let callId = ''
  let localStream: MediaStream | undefined
  let cameraTrack: MediaStreamTrack | undefined
  let screenTrack: MediaStreamTrack | undefined
  const remoteStream = new MediaStream()
  const pendingLocal: CandidateSignal[] = []
  const pendingRemote: CandidateSignal[] = []
  const timers: ReturnType<typeof setInterval>[] = []
  const samples: StatsSample[] = []
  const hints: QualityHint[] = []
  let closed = false
  let view: SessionView = {
    localStream: undefined,
    remoteStream,
    connection: 'new',
    muted: false,
    cameraOn: false,
    cameras: 0,
    sharing: false,
    quality: { level: 'unknown', text: '' },
    audioOnly: '',
  }

  function update(changes: Partial<SessionView>) {
    view = { ...view, ...changes }
    onChange(view)
  }

  function report(failure: unknown) {
    // Signalling errors after the call ended are expected (the other side hung up first).
    if (!closed) console.warn('call signalling:', failure)
  }

  async function prepare(ice: IceConfig) {
    const opened = await openLocalMedia(media === 'video')
    localStream = opened.stream
    cameraTrack = localStream.getVideoTracks()[0]
    const devices = await navigator.mediaDevices.enumerateDevices().catch(() => [])
    update({
      localStream,
      cameraOn: cameraTrack !== undefined,
      cameras: devices.filter((device) => device.kind === 'videoinput').length,
      audioOnly: opened.audioOnly,
    })
    pc = new RTCPeerConnection({ iceServers: ice.ice_servers, iceTransportPolicy: ice.ice_transport_policy })
    for (const track of localStream.getTracks()) pc.addTrack(track, localStream)
    if (reportIce) reportGathering(pc, reportIce)
    pc.addEventListener('icecandidate', ({ candidate }) => {
      if (!candidate) return
      const signal = candidateOf(candidate)
      if (callId) api.sendCandidate(callId, signal).catch(report)
      else pendingLocal.push(signal)
    })
    pc.addEventListener('track', ({ track }) => {
      remoteStream.addTrack(track)
      update({})
    })
    pc.addEventListener('connectionstatechange', () => {
      const state = pc!.connectionState
      update({ connection: state })
      if (state === 'failed') onFailed()
    })
    // Video added during the call (camera on in an audio call, a screen shared) is offered anew.
    pc.addEventListener('negotiationneeded', () => {
      if (!callId || pc!.connectionState !== 'connected') return
      renegotiate().catch(report)
    })
  }

  /** Reports the first gathering of `connection` once it completes (renegotiations are not reported). */
  function reportGathering(connection: RTCPeerConnection, send: (report: IceReport) => Promise<unknown>) {
    const gathering = createIceGatheringLog(location.hostname)
    let reported = false
    connection.addEventListener('icecandidate', (event) => {
      // The ICE server a candidate came from: the event's url (Chromium, Safari) or the candidate's
      // (newer browsers); neither is in TypeScript's DOM types.
      const { candidate } = event
      const url = (event as { url?: string | null }).url ?? (candidate as { url?: string | null } | null)?.url
      if (candidate) gathering.candidate(candidate, url)
    })
    connection.addEventListener('icecandidateerror', (event) => gathering.error(event))
    connection.addEventListener('icegatheringstatechange', () => {
      if (reported || connection.iceGatheringState !== 'complete') return
      reported = true
      // Diagnostics only: a refused or failed report never disturbs the call.
      send(gathering.report()).catch(() => {})
    })
  }

  async function renegotiate() {
    const offer = await pc!.createOffer()
    await pc!.setLocalDescription(offer)
    await api.sendDescription(callId, 'offer', offer.sdp ?? '')
  }

  async function addRemoteCandidate(signal: CandidateSignal) {
    if (!pc?.remoteDescription) {
      pendingRemote.push(signal)
      return
    }
    await pc.addIceCandidate(
      signal.candidate === ''
        ? null
        : { candidate: signal.candidate, sdpMid: signal.sdp_mid, sdpMLineIndex: signal.sdp_mline_index },
    )
  }

  async function flushRemote() {
    for (const signal of pendingRemote.splice(0)) await addRemoteCandidate(signal)
  }

  /** Starts the keepalive and the quality readings once the call has its id. */
  function started(id: string, keepaliveSeconds: number) {
    callId = id
    for (const signal of pendingLocal.splice(0)) api.sendCandidate(callId, signal).catch(report)
    timers.push(setInterval(() => api.keepalive(callId).catch(report), keepaliveSeconds * 1000))
    timers.push(setInterval(() => measure().catch(report), STATS_MS))
  }

  async function measure() {
    if (pc?.connectionState !== 'connected') return
    const sample = sampleOf(await pc.getStats())
    const hint = qualityHint(samples.at(-1), sample)
    samples.push(sample)
    hints.push(hint)
    if (samples.length > 10) samples.shift()
    if (hints.length > 10) hints.shift()
    // The audio-only fallback on a weak link: the picture pauses, the voice goes on.
    if (view.cameraOn && !view.sharing && shouldFallBackToAudio(hints, samples)) {
      setCamera(false)
      update({ quality: hint, audioOnly: 'The connection is weak: your video is paused so the sound stays clear.' })
      return
    }
    update({ quality: hint })
  }

  function videoSender(): RTCRtpSender | undefined {
    return pc?.getSenders().find((sender) => sender.track?.kind === 'video' || sender.track === null)
  }

  function setCamera(on: boolean) {
    if (cameraTrack) cameraTrack.enabled = on
    update({ cameraOn: on && cameraTrack !== undefined })
  }

  return {
    /** The caller's side: media, the offer, initiate; resolves with the new call (ended at once when the line was busy). */
    async place(chatId: string): Promise<CallView> {
      await prepare(await api.iceServers())
      const offer = await pc!.createOffer()
      await pc!.setLocalDescription(offer)
      const answer = await api.initiate(chatId, media, offer.sdp ?? '')
      if (answer.call.state === 'ringing') started(answer.call.call_id, answer.keepalive_seconds)
      else callId = answer.call.call_id
      return answer.call
    },

    /** The callee's side: media, the caller's offer, the answer. */
    async accept(id: string, offerSdp: string): Promise<void> {
      await prepare(await api.iceServers())
      await pc!.setRemoteDescription({ type: 'offer', sdp: offerSdp })
      await flushRemote()
      const answer = await pc!.createAnswer()
      await pc!.setLocalDescription(answer)
      const answered = await api.answer(id, answer.sdp ?? '')
      started(id, answered.keepalive_seconds)
    },

    /** A CallSignal of the other side: its answer, a renegotiation offer or answer, or a candidate. */
    async signal(data: { type: string; sdp?: string; candidate?: CandidateSignal }): Promise<void> {
      if (!pc || closed) {
        if (data.type === 'candidate' && data.candidate) pendingRemote.push(data.candidate)
        return
      }
      if (data.type === 'candidate' && data.candidate) await addRemoteCandidate(data.candidate)
      else if (data.type === 'answer' && data.sdp) {
        await pc.setRemoteDescription({ type: 'answer', sdp: data.sdp })
        await flushRemote()
      } else if (data.type === 'offer' && data.sdp) {
        await pc.setRemoteDescription({ type: 'offer', sdp: data.sdp })
        const answer = await pc.createAnswer()
        await pc.setLocalDescription(answer)
        await api.sendDescription(callId, 'answer', answer.sdp ?? '')
      }
    },

    toggleMute() {
      const muted = !view.muted
      for (const track of localStream?.getAudioTracks() ?? []) track.enabled = !muted
      update({ muted })
    },

    /** Camera off and on; in a call without video yet, the camera is added and offered anew. */
    async toggleCamera() {
      if (cameraTrack) {
        setCamera(!view.cameraOn)
        if (view.cameraOn) update({ audioOnly: '' })
        return
      }
      const stream = await navigator.mediaDevices.getUserMedia({ video: true })
      cameraTrack = stream.getVideoTracks()[0]!
      localStream?.addTrack(cameraTrack)
      pc?.addTrack(cameraTrack, localStream!)
      update({ cameraOn: true, audioOnly: '' })
    },

    /** The next camera of the device, in place of the current one (front and back on a phone). */
    async switchCamera() {
      const cameras = (await navigator.mediaDevices.enumerateDevices()).filter((device) => device.kind === 'videoinput')
      if (cameras.length < 2 || !cameraTrack) return
      const current = cameraTrack.getSettings().deviceId
      const next = cameras[(cameras.findIndex((camera) => camera.deviceId === current) + 1) % cameras.length]!
      const stream = await navigator.mediaDevices.getUserMedia({ video: { deviceId: { exact: next.deviceId } } })
      const track = stream.getVideoTracks()[0]!
      track.enabled = view.cameraOn
      if (!view.sharing) await videoSender()?.replaceTrack(track)
      localStream?.removeTrack(cameraTrack)
      cameraTrack.stop()
      cameraTrack = track
      localStream?.addTrack(track)
      update({ localStream })
    },

    /** Shares a screen or window in place of the camera, and back. */
    async toggleScreenShare() {
      if (screenTrack) {
        const sharing = screenTrack
        screenTrack = undefined
        sharing.stop()
        await videoSender()?.replaceTrack(cameraTrack ?? null)
        update({ sharing: false })
        return
      }
      const display = await navigator.mediaDevices.getDisplayMedia({ video: true })
      const track = display.getVideoTracks()[0]!
      screenTrack = track
      // The browser's own "Stop sharing" ends the track: back to the camera.
      track.addEventListener('ended', () => {
        if (screenTrack === track) this.toggleScreenShare().catch(report)
      })
      const sender = videoSender()
      if (sender) await sender.replaceTrack(track)
      else pc?.addTrack(track, localStream!)
      update({ sharing: true })
    },

    /** Stops everything: timers, media, the connection. */
    close() {
      closed = true
      for (const timer of timers) clearInterval(timer)
      for (const track of localStream?.getTracks() ?? []) track.stop()
      screenTrack?.stop()
      pc?.close()
    },

    get callId() {
      return callId
    },
  }
}

export type CallSession = ReturnType<typeof createCallSession>
