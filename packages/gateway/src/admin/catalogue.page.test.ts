import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { AppFlag } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { assertActionsRefused, nextLink, type Panel, startPanel, tableRows } from '../../test/admin.ts'
import { type DnsAnswer, startDnsPeer } from '../../test/dns-peer.ts'
import { startRestartableChat } from '../../test/events.ts'
import { SERVICE_SECRET } from '../../test/support.ts'
import { downUpstreamUrl } from '../../test/upstream.ts'
import { challengeValue, createProjectDomains, VERIFIED } from '../domains/domains.repository.ts'

forEachDialect('apps, domains and federation partners are listed without their secrets', async (t, dialect) => {
  const panel = await startPanel(t, dialect)
  const { store } = panel
  const owner = await store.users.create({ name: 'Oscar Owner' })
  const { app, secret } = await store.apps.create({
    name: 'Shop',
    owner: owner.crm_id,
    flags: AppFlag.AppAuthAndCORS,
    callbackUrl: 'https://shop.example/hook',
    origins: ['https://shop.example'],
    eventTypes: ['message'],
  })
  const domains = createProjectDomains(store.db, store.nextTick)
  const domain = await domains.add('Chat.Example.com')
  const partner = await store.federation.partners.add({
    slug: 'acme',
    name: 'Acme SSO',
    logo_url: '',
    issuer: 'https://sso.acme.example',
    client_id: 'atrium-client',
    client_secret: 'partner-client-secret-value',
    scopes: 'openid email',
  })
  assert.ok(partner)

  const apps = await panel.page('/ProxyAdmin/Apps', panel.operator)
  assert.match(
    tableRows(apps.html)[0]!,
    new RegExp(
      `^Shop \\(${app.id}\\) Oscar Owner \\(${owner.crm_id}\\) AppAuthAndCORS https://shop.example https://shop.example/hook message`,
    ),
  )
  assert.doesNotMatch(apps.html, new RegExp(secret))
  assert.doesNotMatch(apps.html, new RegExp(app.webhook_secret))

  const listed = await panel.page('/ProxyAdmin/Domains', panel.operator)
  assert.match(
    tableRows(listed.html)[0]!,
    new RegExp(
      `^chat\\.example\\.com pending verification _atrium-challenge\\.chat\\.example\\.com ${challengeValue(domain.token)} not yet`,
    ),
  )

  const partners = await panel.page('/ProxyAdmin/Partners', panel.operator)
  assert.match(tableRows(partners.html)[0]!, /^Acme SSO acme https:\/\/sso\.acme\.example atrium-client /)
  assert.match(partners.html, /name="Scopes" value="openid email"/)
  assert.doesNotMatch(partners.html, /partner-client-secret-value/)
})

forEachDialect('the settings page shows the effective configuration with secrets redacted', async (t, dialect) => {
  const panel = await startPanel(t, dialect)
  const settings = await panel.page('/ProxyAdmin/Settings', panel.operator)
  assert.equal(settings.status, 200)
  const rows = tableRows(settings.html.slice(settings.html.indexOf('<h2>Settings</h2>')))
  assert.ok(rows.includes(`PublicOrigin ${panel.config.PublicOrigin} at restart`))
  assert.ok(rows.includes('ServiceSecret [redacted] at restart'))
  assert.doesNotMatch(settings.html, new RegExp(SERVICE_SECRET))
  assert.ok(rows.some((row) => row.startsWith('Proxy.Routes [] seeds the route map at start')))
})

forEachDialect(
  "the settings page shows each process's version and build, and a module that does not answer",
  async (t, dialect) => {
    const chat = await startRestartableChat(t, dialect)
    const panel = await startPanel(t, dialect, {
      settings: { Modules: { chat: chat.base, crm: await downUpstreamUrl() } },
    })
    const settings = await panel.page('/ProxyAdmin/Settings', panel.operator)
    const { version: gatewayVersion } = JSON.parse(
      await readFile(new URL('../../package.json', import.meta.url), 'utf8'),
    )
    const { version: chatVersion } = JSON.parse(
      await readFile(new URL('../../../chat/package.json', import.meta.url), 'utf8'),
    )
    assert.deepEqual(tableRows(settings.html), [
      `gateway ${gatewayVersion} development up`,
      `chat ${chatVersion} development up`,
      'crm – – not answering',
    ])
  },
)

forEachDialect('empty lists say how to add the first entry', async (t, dialect) => {
  const panel = await startPanel(t, dialect)
  for (const [path, text] of [
    ['/ProxyAdmin/Apps', /No app is registered/],
    ['/ProxyAdmin/Domains', /No project domain yet. Add one below/],
    ['/ProxyAdmin/Partners', /No federation partner yet. Add one below/],
  ] as const) {
    assert.match((await panel.page(path, panel.operator)).html, text)
  }
})

/** The notice or error line a redirect carries. */
function lineOf(location: string, kind: 'notice' | 'error'): string {
  return new URL(location, 'http://panel').searchParams.get(kind) ?? ''
}

/** The operator actions log as "action target outcome" (detail left out), newest first. */
async function actionsOf(panel: Panel): Promise<string[]> {
  const rows = await panel.store.db.selectFrom('admin_actions').selectAll().orderBy('id', 'desc').execute()
  return rows.map((row) => `${row.action} ${row.target} ${row.outcome}`)
}

forEachDialect('an operator adds a domain, checks its TXT record now and removes it', async (t, dialect) => {
  const zone = new Map<string, DnsAnswer>()
  const dns = await startDnsPeer(t, zone)
  const panel = await startPanel(t, dialect, {
    settings: { Dns: { Servers: [dns.server], TimeoutMs: 300, Tries: 1, RecheckSeconds: 0 } },
  })
  const domains = createProjectDomains(panel.store.db, panel.store.nextTick)

  const added = await panel.post('/ProxyAdmin/Domains/Add', { Domain: ' Chat.Example.COM. ' }, panel.operator)
  assert.equal(added.status, 303)
  const row = (await domains.get('chat.example.com'))!
  assert.equal(
    lineOf(added.location, 'notice'),
    `Domain chat.example.com added: publish _atrium-challenge.chat.example.com TXT ${challengeValue(row.token)}, then Check now.`,
  )
  const refused: [string, RegExp][] = [
    ['chat.example.com', /already a project domain/],
    ['not a domain', /Not a valid domain name/],
    ['192.0.2.1', /Not a valid domain name/],
    ['localhost', /Not a valid domain name/],
  ]
  for (const [domain, reason] of refused) {
    const answer = await panel.post('/ProxyAdmin/Domains/Add', { Domain: domain }, panel.operator)
    assert.match(lineOf(answer.location, 'error'), reason, domain)
    assert.match((await panel.page(answer.location, panel.operator)).html, /<p class="notice error" role="status">/)
  }
  assert.deepEqual(
    (await domains.list()).map((domain) => domain.domain),
    ['chat.example.com'],
  )

  // Check now runs the same DNS TXT check as `atrium domain verify`: first there is no record.
  const early = await panel.post('/ProxyAdmin/Domains/Check', { Domain: 'chat.example.com' }, panel.operator)
  assert.equal(
    lineOf(early.location, 'error'),
    'chat.example.com is not verified: no TXT record at _atrium-challenge.chat.example.com.',
  )
  const pending = tableRows((await panel.page('/ProxyAdmin/Domains', panel.operator)).html)[0]!
  assert.match(pending, /pending verification .* no TXT record at _atrium-challenge\.chat\.example\.com/)
  zone.set('_atrium-challenge.chat.example.com', [[challengeValue(row.token)]])
  const checked = await panel.post('/ProxyAdmin/Domains/Check', { Domain: 'chat.example.com' }, panel.operator)
  assert.equal(lineOf(checked.location, 'notice'), 'Domain chat.example.com is verified.')
  assert.equal((await domains.get('chat.example.com'))?.state, VERIFIED)
  const page = await panel.page('/ProxyAdmin/Domains', panel.operator)
  assert.match(tableRows(page.html)[0]!, /^chat\.example\.com verified /)
  assert.doesNotMatch(page.html, /Check now/)

  const removed = await panel.post('/ProxyAdmin/Domains/Remove', { Domain: 'chat.example.com' }, panel.operator)
  assert.equal(lineOf(removed.location, 'notice'), 'Domain chat.example.com removed.')
  const again = await panel.post('/ProxyAdmin/Domains/Remove', { Domain: 'chat.example.com' }, panel.operator)
  assert.equal(lineOf(again.location, 'error'), 'No such project domain.')
  assert.deepEqual(await domains.list(), [])

  assert.deepEqual(await actionsOf(panel), [
    'domain.remove chat.example.com No such project domain.',
    'domain.remove chat.example.com ok',
    'domain.check chat.example.com ok',
    'domain.check chat.example.com chat.example.com is not verified: no TXT record at _atrium-challenge.chat.example.com.',
    'domain.add localhost Not a valid domain name: "localhost"',
    'domain.add 192.0.2.1 Not a valid domain name: "192.0.2.1"',
    'domain.add not a domain Not a valid domain name: "not a domain"',
    'domain.add chat.example.com chat.example.com is already a project domain.',
    'domain.add  Chat.Example.COM.  ok',
  ])
})

const ACME = {
  Id: 'acme',
  Name: 'Acme SSO',
  Issuer: 'https://sso.acme.example',
  ClientId: 'atrium-client',
  ClientSecret: 'partner-client-secret-value',
  Logo: '',
  Scopes: '',
}

forEachDialect('an operator adds a federation partner, changes its scopes and removes it', async (t, dialect) => {
  const panel = await startPanel(t, dialect)
  const { partners } = panel.store.federation

  const added = await panel.post('/ProxyAdmin/Partners/Add', ACME, panel.operator)
  assert.equal(lineOf(added.location, 'notice'), 'Partner acme (Acme SSO) added; the sign-in picker shows it now.')
  const stored = await partners.bySlug('acme')
  assert.deepEqual(
    [stored?.name, stored?.issuer, stored?.client_id, stored?.client_secret, stored?.scopes],
    ['Acme SSO', 'https://sso.acme.example', 'atrium-client', 'partner-client-secret-value', 'openid email profile'],
  )

  const refused: [Record<string, string>, RegExp][] = [
    [{ ...ACME, Id: 'Acme!' }, /id must be 2 to 32 lower-case letters/],
    [{ ...ACME, Id: 'github' }, /github is a built-in sign-in method/],
    [{ ...ACME, Id: 'beta', Issuer: 'http://sso.beta.example' }, /issuer must be an https URL/],
    [{ ...ACME, Id: 'beta', Scopes: 'email profile' }, /scopes must include openid/],
    [{ ...ACME, Id: 'beta', Name: 'x'.repeat(65) }, /name must be at most 64 characters/],
    [{ ...ACME, Id: 'beta', ClientSecret: '' }, /client secret is required/],
    [{ ...ACME, Id: 'beta', Name: 'Beta\u0000' }, /must not contain control characters/],
    [ACME, /exists already/],
  ]
  for (const [form, reason] of refused) {
    const answer = await panel.post('/ProxyAdmin/Partners/Add', form, panel.operator)
    assert.match(lineOf(answer.location, 'error'), reason, JSON.stringify(form))
    assert.match((await panel.page(answer.location, panel.operator)).html, /<p class="notice error" role="status">/)
  }
  assert.deepEqual(
    (await partners.list()).map((partner) => partner.slug),
    ['acme'],
  )

  const scoped = await panel.post(
    '/ProxyAdmin/Partners/Scopes',
    { Id: 'acme', Scopes: 'openid, email groups' },
    panel.operator,
  )
  assert.equal(lineOf(scoped.location, 'notice'), 'Partner acme now asks for: openid email groups.')
  const noOpenid = await panel.post('/ProxyAdmin/Partners/Scopes', { Id: 'acme', Scopes: 'email' }, panel.operator)
  assert.equal(lineOf(noOpenid.location, 'error'), 'scopes must include openid')
  assert.equal((await partners.bySlug('acme'))?.scopes, 'openid email groups')
  const listed = await panel.page('/ProxyAdmin/Partners', panel.operator)
  assert.match(listed.html, /name="Scopes" value="openid email groups"/)
  assert.doesNotMatch(listed.html, /partner-client-secret-value/)

  const removed = await panel.post('/ProxyAdmin/Partners/Remove', { Id: 'acme' }, panel.operator)
  assert.match(lineOf(removed.location, 'notice'), /^Partner acme removed/)
  assert.deepEqual(await partners.list(), [])

  const log = await actionsOf(panel)
  assert.deepEqual(log.slice(0, 3), [
    'partner.remove acme ok',
    'partner.scopes acme scopes must include openid',
    'partner.scopes acme ok',
  ])
  assert.equal(log.at(-1), 'partner.add acme ok')
  const audit = JSON.stringify(await panel.store.db.selectFrom('admin_actions').selectAll().execute())
  assert.ok(!audit.includes('partner-client-secret-value'))
})

forEachDialect(
  'domain and partner actions refuse a non-operator and a cross-origin form, and change nothing',
  async (t, dialect) => {
    const panel = await startPanel(t, dialect)
    const domains = createProjectDomains(panel.store.db, panel.store.nextTick)
    await domains.add('kept.example.com')
    await panel.post('/ProxyAdmin/Partners/Add', { ...ACME, Id: 'kept' }, panel.operator)
    const before = await actionsOf(panel)
    const actions: [string, Record<string, string>][] = [
      ['/ProxyAdmin/Domains/Add', { Domain: 'new.example.com' }],
      ['/ProxyAdmin/Domains/Check', { Domain: 'kept.example.com' }],
      ['/ProxyAdmin/Domains/Remove', { Domain: 'kept.example.com' }],
      ['/ProxyAdmin/Partners/Add', ACME],
      ['/ProxyAdmin/Partners/Scopes', { Id: 'kept', Scopes: 'openid evil' }],
      ['/ProxyAdmin/Partners/Remove', { Id: 'kept' }],
    ]
    await assertActionsRefused(panel, actions)
    const kept = (await domains.list())[0]!
    assert.deepEqual([kept.domain, kept.checked], ['kept.example.com', 0])
    assert.deepEqual(
      (await panel.store.federation.partners.list()).map((partner) => [partner.slug, partner.scopes]),
      [['kept', 'openid email profile']],
    )
    assert.deepEqual(await actionsOf(panel), before)
  },
)

forEachDialect('apps, domains and partners page newest first by their cursor, each once', async (t, dialect) => {
  const panel = await startPanel(t, dialect)
  const { store } = panel
  const owner = await store.users.create({ name: 'Oscar Owner' })
  const domains = createProjectDomains(store.db, store.nextTick)
  // Three of each, made in this order: the lists show them newest first.
  const made = { apps: [] as string[], domains: [] as string[], partners: [] as string[] }
  for (const index of [1, 2, 3]) {
    const { app } = await store.apps.create({ name: `App ${index}`, owner: owner.crm_id, flags: 0 })
    made.apps.unshift(`App ${index} (${app.id})`)
    made.domains.unshift((await domains.add(`d${index}.example.com`)).domain)
    const slug = `partner${index}`
    await store.federation.partners.add({
      slug,
      name: `Partner ${index}`,
      logo_url: '',
      issuer: `https://sso${index}.example`,
      client_id: 'client',
      client_secret: 'secret',
      scopes: 'openid',
    })
    made.partners.unshift(`Partner ${index}`)
  }
  for (const [path, expected] of [
    ['/ProxyAdmin/Apps', made.apps],
    ['/ProxyAdmin/Domains', made.domains],
    ['/ProxyAdmin/Partners', made.partners],
  ] as const) {
    // Two a page: the first page links on, the second holds the last one and does not.
    const shown: string[] = []
    let next: string | undefined = `${path}?Limit=2`
    let pages = 0
    while (next && pages < 5) {
      const page = await panel.page(next, panel.operator)
      assert.equal(page.status, 200, next)
      for (const row of tableRows(page.html)) shown.push(expected.find((name) => row.startsWith(name)) ?? row)
      next = nextLink(page.html)
      pages += 1
    }
    assert.deepEqual(shown, expected, path)
    assert.equal(pages, 2, path)
  }
})
