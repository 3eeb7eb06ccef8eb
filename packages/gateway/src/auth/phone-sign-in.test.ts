import assert from 'node:assert/strict'
import { ContactFlags, errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { startSignInWorld } from '../../test/sign-in.ts'
import { startPhoneWorld } from '../../test/sms-inbox.ts'
import { ContactKind } from '../users/users.repository.ts'

forEachDialect(
  'a phone code goes by SMS through SendOTP and signs in, marking the number verified',
  async (t, dialect) => {
    const world = await startPhoneWorld(t, dialect)
    const start = await world.post('/auth/v1/phone/start', { phone: '+49 170 1234567', returnTo: '/chat/' })
    assert.equal(start.status, 200, JSON.stringify(start.body))
    const [sent] = world.inbox.received
    assert.equal(sent?.path, '/private/v1/SendOTP')
    assert.deepEqual(
      { ...sent?.body, code: 'x' },
      { phone: '+491701234567', code: 'x', channels: 1, purpose: 'sign-in' },
    )

    const verify = await world.post('/auth/v1/phone/verify', {
      challengeId: start.body.result.challengeId,
      code: sent?.body.code,
    })
    assert.equal(verify.status, 200, JSON.stringify(verify.body))
    assert.equal(verify.body.result.returnTo, '/chat/')
    assert.deepEqual(verify.body.result.user.contacts, [
      { kind: 'phone', value: '+491701234567', verified: true, manuallyAdded: false },
    ])
    const contact = await world.store.users.findContact(ContactKind.Phone, '+491701234567')
    assert.equal(contact?.flags, ContactFlags.Verified)

    const replay = await world.post('/auth/v1/phone/verify', {
      challengeId: start.body.result.challengeId,
      code: sent?.body.code,
    })
    assert.equal(replay.body.error.code, errorCodes.ChallengeExpired.code)
  },
)

forEachDialect(
  'a verified number’s owner may get the code by their linked Telegram; an unverified one only by SMS',
  async (t, dialect) => {
    const world = await startPhoneWorld(t, dialect)
    const { user } = await world.store.users.userForContact(ContactKind.Phone, '+491702222222', ContactFlags.Verified)
    const { user: other } = await world.store.users.userForContact(ContactKind.Phone, '+491703333333', 0)

    await world.post('/auth/v1/phone/start', { phone: '+491702222222' })
    await world.post('/auth/v1/phone/start', { phone: '+491703333333' })

    const [verified, unverified] = world.inbox.received.filter((call) => call.path === '/private/v1/SendOTP')
    assert.deepEqual(
      { ...verified?.body, code: 'x' },
      { phone: '+491702222222', code: 'x', channels: 5, purpose: 'sign-in', crm_id: String(user.crm_id) },
    )
    assert.deepEqual(
      { ...unverified?.body, code: 'x' },
      { phone: '+491703333333', code: 'x', channels: 1, purpose: 'sign-in' },
    )
    assert.notEqual(other.crm_id, user.crm_id)
  },
)

forEachDialect(
  'an email challenge id is not accepted by the phone verify, nor the other way round',
  async (t, dialect) => {
    const world = await startPhoneWorld(t, dialect)
    const start = await world.post('/auth/v1/phone/start', { phone: '+491701234567' })
    const code = world.inbox.received[0]?.body.code
    const crossed = await world.post('/auth/v1/email/verify', { challengeId: start.body.result.challengeId, code })
    assert.equal(crossed.body.error.code, errorCodes.ChallengeExpired.code)
    const row = await world.store.db.selectFrom('login_challenges').selectAll().executeTakeFirstOrThrow()
    assert.equal(row.attempts, 0, 'a crossed attempt does not touch the challenge')
  },
)

forEachDialect(
  'with the real chat module and no SMS sender, phone start fails alike for known and unknown numbers',
  async (t, dialect) => {
    const world = await startSignInWorld(t, dialect)
    await world.store.users.userForContact(ContactKind.Phone, '+491701111111', ContactFlags.Verified)
    await world.store.users.addContact(
      (await world.store.users.findContact(ContactKind.Phone, '+491701111111'))!.crm_id,
      ContactKind.Email,
      'known@example.com',
      ContactFlags.Verified,
    )

    const known = await world.post('/auth/v1/phone/start', { phone: '+491701111111' })
    const unknown = await world.post('/auth/v1/phone/start', { phone: '+491702222222' })

    for (const response of [known, unknown]) {
      assert.equal(response.status, 502)
      assert.equal((await json(response)).error.code, errorCodes.OtpDeliveryFailed.code)
    }
    assert.equal(world.smtp.received.length, 0, 'a phone code never goes to the email of the number’s owner')
    assert.equal(
      (await world.store.db.selectFrom('login_challenges').selectAll().execute()).length,
      0,
      'nothing half-written',
    )
    const audit = await world.store.db.selectFrom('login_audit').select('reason').execute()
    assert.deepEqual(
      audit.map((row) => row.reason),
      ['delivery_failed', 'delivery_failed'],
    )
  },
)

forEachDialect('a malformed phone number is refused', async (t, dialect) => {
  const world = await startPhoneWorld(t, dialect)
  for (const phone of ['12345', '+0123456789', 'call me', '+49 170 1234567 ext 5']) {
    const answer = await world.post('/auth/v1/phone/start', { phone })
    assert.equal(answer.body.error.code, errorCodes.InvalidRequest.code, phone)
  }
  assert.equal(world.inbox.received.length, 0)
})
