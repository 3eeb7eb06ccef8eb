import assert from 'node:assert/strict'
import test from 'node:test'
import { twilioSignature } from './twilio.ts'

test("the Twilio signature matches the example in Twilio's security documentation", () => {
  // https://www.twilio.com/docs/usage/security#validating-requests: auth token 12345.
  const params: [string, string][] = [
    ['CallSid', 'CA1234567890ABCDE'],
    ['Caller', '+12349013030'],
    ['Digits', '1234'],
    ['From', '+12349013030'],
    ['To', '+18005551212'],
  ]
  const url = 'https://mycompany.com/myapp.php?foo=1&bar=2'
  assert.equal(twilioSignature('12345', url, params), '0/KCTR6DLpKmkAf8muzZqo1nDgQ=')
  assert.equal(twilioSignature('12345', url, [...params].reverse()), '0/KCTR6DLpKmkAf8muzZqo1nDgQ=', 'order-free')
})
