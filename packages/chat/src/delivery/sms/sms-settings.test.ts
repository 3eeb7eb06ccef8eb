import assert from 'node:assert/strict'
import test from 'node:test'
import { ConfigError } from '@atrium/platform'
import { loadChatConfig } from '../../config.ts'

function problems(settings: Record<string, unknown>): string[] {
  try {
    loadChatConfig({ ServiceSecret: 'x'.repeat(40), ...settings }, {})
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error))
    return error.problems
  }
  return []
}

test('SMS settings: a provider without its credentials does not start, naming each missing one', () => {
  assert.deepEqual(problems({ SmsSender: 'sinch', Sms: { AuthToken: 't', From: '+15550001' } }), [
    'Sms.AccountId: sinch needs the service plan id',
  ])
  assert.deepEqual(problems({ SmsSender: 'twilio' }), [
    'Sms.AccountId: twilio needs the Account SID',
    'Sms.AuthToken: twilio needs its secret',
    'Sms.From: twilio needs a sender number or id',
  ])
  // Telnyx needs no account id: its messaging profile is optional.
  assert.deepEqual(problems({ SmsSender: 'telnyx', Sms: { AuthToken: 'KEY', From: '+15550001' } }), [])
})

test('SMS settings: an unknown provider, a bad URL or a failover without a first provider are refused', () => {
  assert.ok(problems({ SmsSender: 'nexmo' }).some((problem) => problem.startsWith('SmsSender')))
  const sms = { AccountId: 'a', AuthToken: 't', From: '+15550001' }
  assert.deepEqual(problems({ SmsSender: 'plivo', Sms: { ...sms, ApiBaseUrl: 'ftp://x' } }), [
    'Sms.ApiBaseUrl: must be an http(s) URL',
  ])
  assert.deepEqual(problems({ SmsSender: 'plivo', Sms: { ...sms, CallbackBaseUrl: 'https://u:p@example.com' } }), [
    'Sms.CallbackBaseUrl: must not carry credentials',
  ])
  assert.deepEqual(problems({ SmsFailover: { Sender: 'vonage' } }), [
    'SmsFailover.Sender: needs SmsSender (the first provider) set',
  ])
  assert.deepEqual(
    problems({ SmsSender: 'plivo', Sms: sms, SmsFailover: { Sender: 'vonage', AuthToken: 's', From: 'A' } }),
    ['SmsFailover.AccountId: vonage needs the API key'],
  )
})

test('SMS settings: with callbacks on, each provider needs what checks them', () => {
  const sms = { AccountId: 'a', AuthToken: 't', From: '+15550001', CallbackBaseUrl: 'https://example.com' }
  assert.deepEqual(problems({ SmsSender: 'vonage', Sms: sms }), [
    'Sms.CallbackKey: vonage delivery receipts are checked with the signature secret',
  ])
  assert.deepEqual(problems({ SmsSender: 'telnyx', Sms: { ...sms, CallbackKey: 'c2hvcnQ=' } }), [
    "Sms.CallbackKey: telnyx needs the account's Ed25519 public key, base64 (32 bytes)",
  ])
  assert.deepEqual(problems({ SmsSender: 'sinch', Sms: { ...sms, CallbackKey: 'short' } }), [
    'Sms.CallbackKey: sinch callback URLs are signed with a secret of at least 32 characters',
  ])
  // Twilio and Plivo sign with the auth token: nothing more is needed.
  assert.deepEqual(problems({ SmsSender: 'twilio', Sms: sms }), [])
})
