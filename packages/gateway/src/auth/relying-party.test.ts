import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ConfigError } from '@atrium/platform'
import { SERVICE_SECRET } from '../../test/support.ts'
import { loadGatewayConfig } from '../config.ts'
import { relyingPartyId } from './relying-party.ts'

const configured = (PublicOrigin: string, RpId?: string) =>
  loadGatewayConfig({ ServiceSecret: SERVICE_SECRET, PublicOrigin, WebAuthn: RpId === undefined ? {} : { RpId } }, {})

test('the relying party is the host of PublicOrigin unless WebAuthn.RpId names a domain it ends with', () => {
  assert.equal(relyingPartyId(configured('https://p1.example.com')), 'p1.example.com')
  assert.equal(relyingPartyId(configured('https://p1.example.com', 'Example.com')), 'example.com')
  assert.equal(relyingPartyId(configured('http://localhost:8080', 'localhost')), 'localhost')
})

test('WebAuthn.RpId must be a domain name that holds the host of PublicOrigin', () => {
  function problems(rpId: string, publicOrigin = 'https://p1.example.com'): string {
    try {
      configured(publicOrigin, rpId)
      return ''
    } catch (error) {
      assert.ok(error instanceof ConfigError, String(error))
      return error.message
    }
  }
  for (const rpId of ['example.com', 'p1.example.com', '']) assert.equal(problems(rpId), '', rpId)
  for (const rpId of ['https://example.com', '.example.com', 'example.com:443']) {
    assert.match(problems(rpId), /WebAuthn\.RpId: .* is not a domain name like example\.com/, rpId)
  }
  assert.match(
    problems('other.org'),
    /WebAuthn\.RpId: the host of PublicOrigin \(p1\.example\.com\) must be other\.org/,
  )
  assert.match(problems('p2.example.com'), /must be p2\.example\.com or end with \.p2\.example\.com/)
  assert.match(problems('127.0.0.1', 'http://127.0.0.1:8080'), /is not a domain name/)
})
