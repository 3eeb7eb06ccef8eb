/**
 * Call quality hints from WebRTC statistics (RTCPeerConnection.getStats): what a person should
 * know about the link, in words, and when video should give way to audio. Pure, so it is tested
 * with recorded numbers.
 */

/** The numbers of one getStats() reading that the hints use. */
export interface StatsSample {
  /** Inbound RTP packets received and lost so far, every track together. */
  packetsReceived: number
  packetsLost: number
  /** Round-trip time of the selected candidate pair in seconds; undefined before one is known. */
  roundTripTime?: number
  /** The sender's bandwidth estimate in bits per second; undefined when the browser gives none. */
  availableOutgoingBitrate?: number
  /** The local candidate type of the selected pair: host, srflx, prflx or relay. */
  candidateType?: string
}

export type QualityLevel = 'unknown' | 'good' | 'fair' | 'poor'

export interface QualityHint {
  level: QualityLevel
  /** A short sentence for the call screen; '' when there is nothing to say. */
  text: string
}

/** Below this estimate video is not worth sending (about what a small, choppy picture needs). */
export const VIDEO_MIN_BITRATE = 150_000

/** Reads the numbers the hints use from a getStats() report. */
export function sampleOf(report: RTCStatsReport): StatsSample {
  const sample: StatsSample = { packetsReceived: 0, packetsLost: 0 }
  let pair: Record<string, unknown> | undefined
  const byId = new Map<string, Record<string, unknown>>()
  report.forEach((stat: Record<string, unknown>) => {
    byId.set(String(stat.id), stat)
    if (stat.type === 'inbound-rtp') {
      sample.packetsReceived += Number(stat.packetsReceived ?? 0)
      sample.packetsLost += Math.max(0, Number(stat.packetsLost ?? 0))
    }
    if (stat.type === 'candidate-pair' && stat.state === 'succeeded' && (stat.nominated || !pair)) pair = stat
  })
  if (pair) {
    if (typeof pair.currentRoundTripTime === 'number') sample.roundTripTime = pair.currentRoundTripTime
    if (typeof pair.availableOutgoingBitrate === 'number')
      sample.availableOutgoingBitrate = pair.availableOutgoingBitrate
    const local = byId.get(String(pair.localCandidateId))
    if (local && typeof local.candidateType === 'string') sample.candidateType = local.candidateType
  }
  return sample
}

/**
 * The hint for the link between two readings: loss over the interval, the round trip and the
 * bandwidth estimate. Nothing received in the interval is the worst case: media stopped.
 */
export function qualityHint(previous: StatsSample | undefined, current: StatsSample): QualityHint {
  if (!previous) return { level: 'unknown', text: '' }
  const received = current.packetsReceived - previous.packetsReceived
  const lost = current.packetsLost - previous.packetsLost
  if (received <= 0) return { level: 'poor', text: 'No sound or picture is arriving: the connection may be lost.' }
  const loss = lost / (received + lost)
  const rtt = current.roundTripTime ?? 0
  const bitrate = current.availableOutgoingBitrate
  if (loss > 0.1 || rtt > 0.8) return { level: 'poor', text: 'Weak connection: expect gaps and delays.' }
  if (loss > 0.03 || rtt > 0.3 || (bitrate !== undefined && bitrate < VIDEO_MIN_BITRATE)) {
    return { level: 'fair', text: 'Unstable connection.' }
  }
  return { level: 'good', text: current.candidateType === 'relay' ? 'Good connection (relayed).' : 'Good connection.' }
}

/**
 * True when video should pause and audio go on: the last `window` hints were all poor, or the
 * bandwidth estimate stayed below what video needs (the audio-only fallback on a weak link).
 */
export function shouldFallBackToAudio(hints: QualityHint[], samples: StatsSample[], window = 3): boolean {
  if (hints.length < window || samples.length < window) return false
  const poor = hints.slice(-window).every((hint) => hint.level === 'poor')
  const starved = samples
    .slice(-window)
    .every(
      (sample) => sample.availableOutgoingBitrate !== undefined && sample.availableOutgoingBitrate < VIDEO_MIN_BITRATE,
    )
  return poor || starved
}
