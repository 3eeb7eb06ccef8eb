import assert from 'node:assert/strict'
import test from 'node:test'
import { ConfigError } from '@atrium/platform'
import { redactConfig } from '../cli/redact.ts'
import { loadGatewayConfig } from '../config.ts'
import { configuredProviders } from './providers.ts'

const BASE = { ServiceSecret: 'x'.repeat(40) }

function problems(oauth: object): string {
  try {
    loadGatewayConfig({ ...BASE, OAuth: oauth }, {})
    return ''
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error))
    return error.message
  }
}

test('a provider is on only when its client is set, and settings that cannot work are refused at start', () => {
  assert.deepEqual(configuredProviders(loadGatewayConfig(BASE, {}).OAuth), [])
  const config = loadGatewayConfig(
    {
      ...BASE,
      OAuth: { Google: { ClientId: 'g', ClientSecret: 'google-secret' }, Telegram: { BotName: 'b', BotToken: '1:t' } },
    },
    {},
  )
  assert.deepEqual(
    configuredProviders(config.OAuth).map((provider) => [provider.id, provider.issuer]),
    [
      ['google', 'https://accounts.google.com'],
      ['telegram', ''],
    ],
  )
  assert.match(problems({ Microsoft: { ClientId: 'm' } }), /OAuth\.Microsoft\.Issuer: required/)
  assert.match(
    problems({ Oidc: { ClientId: 'o', Issuer: 'http://idp.example' } }),
    /OAuth\.Oidc\.Issuer: must be an https URL/,
  )
  assert.match(problems({ GitHub: { ClientId: 'g', ApiUrl: 'javascript:alert(1)' } }), /OAuth\.GitHub\.ApiUrl/)
  assert.match(problems({ Telegram: { BotName: 'b' } }), /BotName and BotToken/)
  assert.equal(problems({ Oidc: { ClientId: 'o', Issuer: 'http://127.0.0.1:9000' } }), '')

  // Secrets are hidden wherever settings are shown.
  const shown = JSON.stringify(redactConfig(config))
  assert.ok(!shown.includes('google-secret') && !shown.includes('1:t'), shown)
})
