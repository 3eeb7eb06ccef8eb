import assert from 'node:assert/strict'
import { ContactFlags, errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { federatedGateway, RETURN_URI } from '../../test/federated-flow.ts'
import { startGitHub } from '../../test/oauth-peers.ts'
import { createClock } from '../../test/support.ts'
import { ContactKind } from '../users/users.repository.ts'
import { type TelegramData, telegramHash } from './telegram.ts'

type T = Parameters<Parameters<typeof forEachDialect>[1]>[0]

const BOT_TOKEN = '123456789:test-bot-token-known-only-to-this-test'

async function followGitHub(location: URL | undefined): Promise<URL> {
  const response = await fetch(String(location), { redirect: 'manual' })
  assert.equal(response.status, 302)
  return new URL(response.headers.get('location') ?? '')
}

async function withGitHub(t: T, dialect: 'sqlite' | 'postgres') {
  const github = await startGitHub(t, { clientId: 'Iv1.test', clientSecret: 'github-test-client-secret' })
  const gateway = await federatedGateway(t, dialect, { GitHub: github.settings })
  return { ...gateway, github }
}

forEachDialect('GitHub signs in by its OAuth flow and links by a verified primary email only', async (t, dialect) => {
  const gateway = await withGitHub(t, dialect)
  const existing = await gateway.store.users.create()
  await gateway.store.users.addContact(existing.crm_id, ContactKind.Email, 'octo@example.com')
  const catalogue = await json(await fetch(`${gateway.url}/auth/v1/federated/providers`))
  assert.deepEqual(catalogue.result.providers, [{ id: 'github', name: 'GitHub', logo: '', kind: 'github' }])

  gateway.github.current.user = {
    id: 583231,
    login: 'octocat',
    name: 'The Octocat',
    emails: [
      { email: 'unverified@example.com', verified: false, primary: false },
      { email: 'Octo@Example.com', verified: true, primary: true },
    ],
  }
  const flow = await gateway.start('github', '/chat/')
  assert.equal(flow.location?.searchParams.get('code_challenge_method'), 'S256')
  assert.equal(flow.location?.searchParams.get('nonce'), null)
  assert.equal(flow.location?.searchParams.get('redirect_uri'), RETURN_URI)
  const done = await gateway.finish(await followGitHub(flow.location), String(flow.cookie))
  assert.equal(done.status, 302, JSON.stringify(done.body))
  assert.equal(done.location, 'https://atrium.example/chat/')
  assert.equal((await gateway.whoIs(done.session)).crmId, String(existing.crm_id))
  const contact = await gateway.store.users.findContact(ContactKind.Email, 'octo@example.com')
  assert.ok(contact && (contact.flags & ContactFlags.Verified) !== 0)
  assert.equal((await gateway.store.federation.identity('github', '583231'))?.crm_id, existing.crm_id)

  // Another GitHub account whose only email with that address is unverified gets its own user.
  const other = await gateway.store.users.create()
  await gateway.store.users.addContact(other.crm_id, ContactKind.Email, 'shared@example.com')
  gateway.github.current.user = {
    id: 9,
    login: 'squatter',
    name: '',
    emails: [{ email: 'shared@example.com', verified: false, primary: true }],
  }
  const second = await gateway.start('github')
  const squatter = await gateway.finish(await followGitHub(second.location), String(second.cookie))
  assert.equal(squatter.status, 302)
  const who = await gateway.whoIs(squatter.session)
  assert.notEqual(who.crmId, String(other.crm_id))
  assert.deepEqual(who.user.contacts, [])

  // A replayed code, and a code with another flow's PKCE verifier, are refused by GitHub.
  const replay = await gateway.finish(await followGitHub((await gateway.start('github')).location), '')
  assert.equal(replay.status, 401)
  const a = await gateway.start('github')
  const backA = await followGitHub(a.location)
  await gateway.store.db
    .updateTable('federated_flows')
    .set({ code_verifier: 'y'.repeat(43) })
    .where('consumed', '=', 0)
    .execute()
  const tampered = await gateway.finish(backA, String(a.cookie))
  assert.equal(tampered.status, 401)
  assert.equal(tampered.body.error.code, errorCodes.InvalidCredentials.code)
  assert.deepEqual(
    (await gateway.audit()).map((row) => [row.method, Number(row.success), row.reason]),
    [
      ['oauth_github', 1, ''],
      ['oauth_github', 1, ''],
      ['oauth', 0, 'state_mismatch'],
      ['oauth_github', 0, 'provider_refused'],
    ],
  )
})

forEachDialect(
  'Telegram login checks the widget data’s hash and age and binds it to the browser',
  async (t, dialect) => {
    const clock = createClock()
    const gateway = await federatedGateway(
      t,
      dialect,
      { Telegram: { BotName: 'atrium_test_bot', BotToken: BOT_TOKEN, MaxAgeSeconds: 3600 } },
      clock.now,
    )
    const signed = (data: TelegramData, token = BOT_TOKEN): TelegramData => ({
      ...data,
      hash: telegramHash(data, token),
    })
    const nowSeconds = () => String(Math.floor(clock.now() / 1000))
    const attempt = async (data: TelegramData, useCookie = true) => {
      const flow = await gateway.start('telegram', '/chat/')
      assert.equal(flow.status, 302)
      // The widget page names the bot and sends the data back to the return address with the flow's state.
      assert.equal(flow.location?.origin, 'https://atrium.example')
      const page = await fetch(`${gateway.url}${flow.location?.pathname}${flow.location?.search}`)
      const html = await page.text()
      assert.match(html, /data-telegram-login="atrium_test_bot"/)
      // A sign-in page: no other site may frame it, and it loads only Telegram's widget.
      const policy = page.headers.get('content-security-policy') ?? ''
      assert.match(policy, /(^|; )frame-ancestors 'none'(;|$)/)
      assert.match(policy, /(^|; )script-src https:\/\/telegram\.org(;|$)/)
      assert.equal(page.headers.get('x-frame-options'), 'DENY')
      const authUrl = /data-auth-url="([^"]+)"/.exec(html)?.[1]?.replaceAll('&#38;', '&') ?? ''
      const back = new URL(authUrl)
      assert.equal(back.origin + back.pathname, RETURN_URI)
      for (const [key, value] of Object.entries(data)) back.searchParams.set(key, String(value))
      return gateway.finish(back, useCookie ? String(flow.cookie) : '')
    }
    const person = { id: '424242', first_name: 'Tele', username: 'tele', auth_date: nowSeconds() }

    const ok = await attempt(signed(person))
    assert.equal(ok.status, 302, JSON.stringify(ok.body))
    assert.equal(ok.location, 'https://atrium.example/chat/')
    const who = await gateway.whoIs(ok.session)
    assert.equal((await gateway.store.federation.identity('telegram', '424242'))?.crm_id, Number(who.crmId))

    assert.equal((await attempt(signed(person, '123456789:another-bot'))).status, 401)
    assert.equal((await attempt({ ...signed(person), first_name: 'Changed' })).status, 401)
    assert.equal((await attempt(signed(person), false)).status, 401)
    const old = { ...person, auth_date: nowSeconds() }
    clock.advance(3601 * 1000)
    assert.equal((await attempt(signed(old))).status, 401)
    const again = await attempt(signed({ ...person, auth_date: nowSeconds() }))
    assert.equal((await gateway.whoIs(again.session)).crmId, who.crmId)
    assert.deepEqual(
      (await gateway.audit()).map((row) => [row.method, Number(row.success), row.reason]),
      [
        ['telegram', 1, ''],
        ['telegram', 0, 'wrong_hash'],
        ['telegram', 0, 'wrong_hash'],
        ['oauth', 0, 'state_mismatch'],
        ['telegram', 0, 'expired'],
        ['telegram', 1, ''],
      ],
    )
  },
)
