import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTimetickGenerator, errorCodes, migrateToLatest } from '@atrium/platform'
import { forEachDialect, openTestDatabase } from '@atrium/platform/testing'
import { gatewayMigrations } from '../db/migrations/index.ts'
import type { GatewayDatabase } from '../db/schema.ts'
import { createFederation } from './federation.repository.ts'
import { checkedPartner } from './partner-input.ts'

const ACME = {
  slug: 'acme',
  name: 'Acme SSO',
  issuer: 'https://sso.acme.example',
  clientId: 'atrium',
  clientSecret: 'secret',
}

forEachDialect('a partner’s scopes are replaced by slug; an unknown slug changes nothing', async (t, dialect) => {
  const database = await openTestDatabase<GatewayDatabase>(t, dialect)
  await migrateToLatest(database, gatewayMigrations)
  const { partners } = createFederation(database.db, createTimetickGenerator({ node: 1 }))
  await partners.add(checkedPartner(ACME))
  await partners.add(checkedPartner({ ...ACME, slug: 'beta' }))

  assert.equal(await partners.setScopes('acme', 'openid groups'), true)
  assert.equal(await partners.setScopes('nobody', 'openid'), false)
  assert.deepEqual(
    (await partners.list()).map((partner) => [partner.slug, partner.scopes]),
    [
      ['acme', 'openid groups'],
      ['beta', 'openid email profile'],
    ],
  )
})

test('checkedPartner normalises what is given and refuses what `atrium partner add` refuses', () => {
  assert.deepEqual(
    checkedPartner({ ...ACME, name: ' Acme SSO ', issuer: 'http://127.0.0.1:8080/', scopes: 'openid,email' }),
    {
      slug: 'acme',
      name: 'Acme SSO',
      logo_url: '',
      issuer: 'http://127.0.0.1:8080/',
      client_id: 'atrium',
      client_secret: 'secret',
      scopes: 'openid email',
    },
  )
  for (const bad of [
    { ...ACME, slug: 'a' },
    { ...ACME, slug: 'google' },
    { ...ACME, issuer: 'http://sso.acme.example' },
    { ...ACME, issuer: 'https://user:pw@sso.acme.example' },
    { ...ACME, logo: 'javascript:alert(1)' },
    { ...ACME, scopes: 'email' },
    { ...ACME, name: '' },
    { ...ACME, clientId: ' ' },
    { ...ACME, name: 'Acme\u0007' },
  ]) {
    assert.throws(
      () => checkedPartner(bad),
      (error: { code: number }) => error.code === errorCodes.InvalidRequest.code,
      JSON.stringify(bad),
    )
  }
})
