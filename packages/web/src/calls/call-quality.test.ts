import assert from 'node:assert/strict'
import test from 'node:test'
import { qualityHint, type StatsSample, shouldFallBackToAudio, VIDEO_MIN_BITRATE } from './call-quality.ts'

const at = (packetsReceived: number, packetsLost: number, extra: Partial<StatsSample> = {}): StatsSample => ({
  packetsReceived,
  packetsLost,
  ...extra,
})

test('the hint follows loss, round trip and arrival between two readings', () => {
  assert.deepEqual(qualityHint(undefined, at(10, 0)), { level: 'unknown', text: '' })
  assert.deepEqual(qualityHint(at(100, 0), at(200, 0, { roundTripTime: 0.05 })), {
    level: 'good',
    text: 'Good connection.',
  })
  assert.equal(qualityHint(at(100, 0), at(200, 0, { candidateType: 'relay' })).text, 'Good connection (relayed).')
  // 5 of 100 lost in the interval: unstable; 20 of 100: weak.
  assert.equal(qualityHint(at(100, 10), at(195, 15)).level, 'fair')
  assert.equal(qualityHint(at(100, 10), at(180, 30)).level, 'poor')
  assert.equal(qualityHint(at(100, 0), at(200, 0, { roundTripTime: 1.2 })).level, 'poor')
  // Nothing arrived since the last reading.
  assert.equal(qualityHint(at(100, 0), at(100, 0)).level, 'poor')
})

test('video gives way to audio after a run of weak readings, not after one', () => {
  const poor = { level: 'poor' as const, text: '' }
  const good = { level: 'good' as const, text: '' }
  const samples = [at(1, 0), at(2, 0), at(3, 0)]
  assert.equal(shouldFallBackToAudio([good, poor, poor], samples), false)
  assert.equal(shouldFallBackToAudio([poor, poor, poor], samples), true)
  const starved = [1, 2, 3].map((n) => at(n, 0, { availableOutgoingBitrate: VIDEO_MIN_BITRATE - 1 }))
  assert.equal(shouldFallBackToAudio([good, good, good], starved), true)
  assert.equal(shouldFallBackToAudio([good, good], starved.slice(1)), false)
})
