import assert from 'node:assert/strict'
import { forEachDialect, json } from '@atrium/platform/testing'
import { federatedGateway, RETURN_URI } from '../../test/federated-flow.ts'
import { signInAtProvider, startOidcProvider } from '../../test/oauth-peers.ts'
import { SERVICE_SECRET } from '../../test/support.ts'
import { runCli } from '../cli/cli.ts'

const SECRET = 'partner-client-secret-never-printed'

forEachDialect(
  'a partner added with the CLI appears in the picker, signs in, and is gone once removed',
  async (t, dialect) => {
    const peer = await startOidcProvider(t, {
      clientId: 'acme-client',
      clientSecret: SECRET,
      redirectUri: RETURN_URI,
      accounts: { carol: { email: 'carol@acme.example', emailVerified: true } },
    })
    const gateway = await federatedGateway(t, dialect, {})
    const env = { GatewayDB: gateway.config.GatewayDB, ServiceSecret: SERVICE_SECRET }
    const cli = async (...args: string[]) => {
      const out: string[] = []
      const code = await runCli(args, env, { out: (text) => out.push(text), err: (text) => out.push(text) })
      return { code, text: out.join('\n') }
    }
    const catalogue = async () =>
      (await json(await fetch(`${gateway.url}/auth/v1/federated/providers`))).result.providers

    assert.deepEqual(await catalogue(), [])
    const add = [
      'partner',
      'add',
      'acme',
      '--name',
      'Acme Corp',
      '--issuer',
      peer.issuer,
      '--client-id',
      'acme-client',
      '--client-secret',
      SECRET,
      '--logo',
      'https://acme.example/logo.svg',
    ]
    const added = await cli(...add)
    assert.equal(added.code, 0, added.text)
    assert.equal((await cli(...add)).code, 2)
    assert.equal(
      (
        await cli(
          'partner',
          'add',
          'github',
          '--name',
          'x',
          '--issuer',
          peer.issuer,
          '--client-id',
          'a',
          '--client-secret',
          'b',
        )
      ).code,
      1,
    )
    assert.equal(
      (
        await cli(
          'partner',
          'add',
          'evil',
          '--name',
          'x',
          '--issuer',
          'javascript:alert(1)',
          '--client-id',
          'a',
          '--client-secret',
          'b',
        )
      ).code,
      1,
    )
    const nul = await cli(
      'partner',
      'add',
      'nul',
      '--name',
      'a\u0000b',
      '--issuer',
      peer.issuer,
      '--client-id',
      'a',
      '--client-secret',
      'b',
    )
    assert.equal(nul.code, 1, nul.text)
    const listed = await cli('partner', 'list', '--json')
    assert.equal(listed.code, 0)
    assert.ok(!listed.text.includes(SECRET))
    assert.deepEqual(
      JSON.parse(listed.text).partners.map((p: { id: string; name: string }) => [p.id, p.name]),
      [['acme', 'Acme Corp']],
    )
    assert.deepEqual(await catalogue(), [
      { id: 'acme', name: 'Acme Corp', logo: 'https://acme.example/logo.svg', kind: 'oidc' },
    ])

    const flow = await gateway.start('acme', '/chat/')
    assert.equal(flow.location?.origin, peer.issuer)
    const done = await gateway.finish(await signInAtProvider(String(flow.location), 'carol'), String(flow.cookie))
    assert.equal(done.status, 302, JSON.stringify(done.body))
    assert.equal(done.location, 'https://atrium.example/chat/')
    const who = await gateway.whoIs(done.session)
    assert.deepEqual(
      who.user.contacts.map((contact) => [contact.value, contact.verified]),
      [['carol@acme.example', true]],
    )
    assert.deepEqual(
      (await gateway.audit()).map((row) => row.method),
      ['federation_acme'],
    )

    assert.equal((await cli('partner', 'remove', 'acme')).code, 0)
    assert.equal((await cli('partner', 'remove', 'acme')).code, 2)
    assert.deepEqual(await catalogue(), [])
    assert.equal((await gateway.start('acme')).status, 404)
  },
)
