/** One ring: two tones together for 1.2 s, then 2.8 s of quiet, as a phone rings. */
const RING_ON_S = 1.2
const RING_CYCLE_MS = 4000
const TONES_HZ = [440, 480]

/**
 * Plays a ring from the Web Audio API (no sound file to fetch) until stopped. When the browser
 * holds audio back until the person has interacted with the page, it stays silent: the ring
 * dialog is there either way.
 */
export function startRingTone(): () => void {
  let context: AudioContext
  try {
    context = new AudioContext()
  } catch {
    return () => {}
  }
  function ring() {
    const at = context.currentTime
    const gain = context.createGain()
    gain.gain.setValueAtTime(0.0001, at)
    gain.gain.exponentialRampToValueAtTime(0.08, at + 0.05)
    gain.gain.setValueAtTime(0.08, at + RING_ON_S - 0.05)
    gain.gain.exponentialRampToValueAtTime(0.0001, at + RING_ON_S)
    gain.connect(context.destination)
    for (const hz of TONES_HZ) {
      const tone = context.createOscillator()
      tone.frequency.value = hz
      tone.connect(gain)
      tone.start(at)
      tone.stop(at + RING_ON_S)
    }
  }
  ring()
  const timer = setInterval(ring, RING_CYCLE_MS)
  return () => {
    clearInterval(timer)
    context.close().catch(() => {})
  }
}
