import assert from 'node:assert/strict'
import { test } from 'node:test'
import { browserEnvironment, clientInfo } from './client-info.ts'

test('the audit fields name the screen, time zone, language and device', () => {
  const info = clientInfo(
    { screenWidth: 1920, screenHeight: 1080, timezone: 'Europe/Berlin', language: 'de-DE' },
    '3f2b8c1e-0d4a-4c5e-9f00-1a2b3c4d5e6f',
  )
  assert.deepEqual(info, {
    deviceGuid: '3f2b8c1e-0d4a-4c5e-9f00-1a2b3c4d5e6f',
    screen: '1920x1080',
    timezone: 'Europe/Berlin',
    language: 'de-DE',
  })
})

test('unknown or oversized values are left out instead of failing the sign-in', () => {
  const info = clientInfo({ screenWidth: 0, screenHeight: 0, timezone: 'x'.repeat(65), language: '' }, 'guid-0001')
  assert.deepEqual(info, { deviceGuid: 'guid-0001' })
})

test('outside a browser the environment has no screen but a time zone', () => {
  const environment = browserEnvironment()
  assert.equal(environment.screenWidth, 0)
  assert.ok(environment.timezone.length > 0)
})
