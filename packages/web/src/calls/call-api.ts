import type { ApiClient } from '../api/client.ts'
import type { CallMedia, CallView } from './call-words.ts'
import type { IceReport } from './ice-report.ts'

const CALL = '/msg/v1/call'

/** What initiate and answer say about an active call, with the timing its client keeps to. */
export interface ActiveCallAnswer {
  call: CallView
  keepalive_seconds: number
  ring_seconds: number
}

/** A line of the call history: the call with who the other person is. */
export interface CallHistoryEntry extends CallView {
  direction: 'outgoing' | 'incoming'
  peer: string
  peer_name: string
}

/** The ICE servers and policy the gateway hands a caller (GET /auth/v1/call/ice_servers). */
export interface IceConfig {
  ice_servers: RTCIceServer[]
  ice_transport_policy: RTCIceTransportPolicy
  expires_at: string
}

/** An ICE candidate as the call operations carry it. */
/** send_signal's answer: `ended` when the call was over and a candidate or keepalive was dropped. */
export interface SignalAnswer {
  delivered: boolean
  ended?: boolean
}

export interface CandidateSignal {
  candidate: string
  sdp_mid: string
  sdp_mline_index: number
}

/** The call operations of the chat module and the gateway's ICE servers (docs/calls.md). */
export function createCallApi(client: ApiClient) {
  return {
    iceServers: () => client.get<IceConfig>('/auth/v1/call/ice_servers'),
    /** What ICE gathered, for the gateway's STUN diagnostics (docs/stun.md); signed-in people only. */
    reportIce: (report: IceReport) => client.post<unknown>('/auth/v1/stun/report', report),
    initiate: (chatId: string, media: CallMedia, sdp: string) =>
      client.post<ActiveCallAnswer>(`${CALL}/initiate`, { chat_id: chatId, media, sdp }),
    answer: (callId: string, sdp: string) => client.post<ActiveCallAnswer>(`${CALL}/answer`, { call_id: callId, sdp }),
    reject: (callId: string) => client.post<{ call: CallView }>(`${CALL}/reject`, { call_id: callId }),
    end: (callId: string, failed = false) =>
      client.post<{ call: CallView }>(`${CALL}/end`, failed ? { call_id: callId, failed } : { call_id: callId }),
    /** Ends the call as the page goes away (pagehide), with a request that outlives the page. */
    endOnLeave: (callId: string) => client.beacon(`${CALL}/end`, { call_id: callId }),
    sendDescription: (callId: string, type: 'offer' | 'answer', sdp: string) =>
      client.post<SignalAnswer>(`${CALL}/send_signal`, { call_id: callId, type, sdp }),
    sendCandidate: (callId: string, candidate: CandidateSignal) =>
      client.post<SignalAnswer>(`${CALL}/send_signal`, { call_id: callId, type: 'candidate', candidate }),
    keepalive: (callId: string) =>
      client.post<SignalAnswer>(`${CALL}/send_signal`, { call_id: callId, type: 'keepalive' }),
    /** The person's ringing or connected call, with the caller's offer while it rings for them. */
    active: () =>
      client.get<{ call: CallView | null; offer: string; keepalive_seconds: number; ring_seconds: number }>(
        `${CALL}/active`,
      ),
    /**
     * The caller's call events after `since` (omitted: none, just the cursor to start from),
     * waiting up to `wait` ms: how a guest follows its calls while its SSE stream is down.
     */
    events: (since: string | undefined, wait: number) =>
      client.get<{ events: { type: string; tick: string; data: Record<string, unknown> }[]; last_tick: string }>(
        `${CALL}/events`,
        { since, wait },
      ),
    history: (page: { before?: string; limit?: number } = {}) =>
      client.get<{ calls: CallHistoryEntry[]; has_more: boolean }>(`${CALL}/history`, page),
  }
}

export type CallApi = ReturnType<typeof createCallApi>
