import assert from 'node:assert/strict'
import test from 'node:test'
import { CommunicationChannel } from '@atrium/platform'
import { maskChatId, maskEmail, maskPhone } from './masking.ts'
import { chooseOtpChannel } from './otp-channels.ts'

const { SMS, Email, Messenger } = CommunicationChannel
const ALL = SMS | Email | Messenger
const everywhere = { telegram_chat_id: '123456789', email: 'ann@example.com', phone: '+491701234567' }
const allConfigured = { telegram: true, email: true, sms: true }

test('Telegram comes first when it is allowed, linked and configured', () => {
  assert.deepEqual(chooseOtpChannel({ channels: ALL, ...everywhere }, allConfigured), {
    channel: 'telegram',
    to: '123456789',
  })
})

test('email comes next, then SMS', () => {
  const noTelegram = { email: 'ann@example.com', phone: '+491701234567' }
  assert.equal(chooseOtpChannel({ channels: ALL, ...noTelegram }, allConfigured).channel, 'email')
  assert.equal(chooseOtpChannel({ channels: ALL, phone: '+491701234567' }, allConfigured).channel, 'sms')
})

test('a channel whose flag is cleared is never used, whatever the request names', () => {
  assert.equal(chooseOtpChannel({ channels: Email | SMS, ...everywhere }, allConfigured).channel, 'email')
  assert.equal(chooseOtpChannel({ channels: SMS, ...everywhere }, allConfigured).channel, 'sms')
  assert.equal(chooseOtpChannel({ channels: Messenger, email: 'ann@example.com' }, allConfigured).channel, null)
})

test('an unconfigured sender makes its channel unavailable, and the next allowed one is used', () => {
  const noBots = { telegram: false, email: true, sms: false }
  assert.equal(chooseOtpChannel({ channels: ALL, ...everywhere }, noBots).channel, 'email')
  assert.equal(chooseOtpChannel({ channels: Messenger | SMS, ...everywhere }, noBots).channel, null)
})

test('the refusal names the allowed channels and what each one lacked', () => {
  const choice = chooseOtpChannel(
    { channels: Messenger | SMS, phone: '+491701234567' },
    { telegram: true, email: true, sms: false },
  )
  assert.deepEqual(choice, {
    channel: null,
    reason:
      'No allowed channel can deliver the code (allowed: Messenger, SMS). Messenger: no telegram_chat_id given; ' +
      'SMS: the SMS sender (SmsSender) is not configured.',
  })
  assert.deepEqual(chooseOtpChannel({ channels: 0, ...everywhere }, allConfigured), {
    channel: null,
    reason: 'No allowed channel can deliver the code (allowed: none).',
  })
})

test('destinations are masked for responses and logs', () => {
  assert.equal(maskEmail('alice@example.com'), 'a***@example.com')
  assert.equal(maskPhone('+491701234123'), '+49*******123')
  assert.equal(maskChatId('123456789'), '******789')
})
