import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import test from 'node:test'
import { ChatMessFlags, createDatabase, errorCodes, signedHeaders } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, onlyWithPostgres, until } from '@atrium/platform/testing'
import { SERVICE_SECRET } from '../../test/support.ts'
import { messageUpdate } from '../../test/telegram-bot-api.ts'
import { startTelegramChat, startTokenOf } from '../../test/telegram-chat.ts'
import type { ChatDatabase } from '../db/schema.ts'

const PAGE = '/ChatAdmin/BotWidgets'
const OPERATOR = { 'X-Crm': '1', 'X-Scopes': 'admin support' }
const ADA = { id: 5_570_001, first_name: 'Ada' }

interface PageAnswer {
  status: number
  location: string
  html: string
  headers: Headers
}

async function startPages(t: TestContext, dialect: 'sqlite' | 'postgres') {
  const url = await createTestDatabaseUrl(t, dialect)
  const telegram = await startTelegramChat(t, dialect, {
    url,
    telegram: { Widgets: { RefreshSeconds: 1, MinRefreshSeconds: 5, LiveHours: 1 } },
  })
  const database = createDatabase<ChatDatabase>(url)
  t.after(() => database.destroy())
  await telegram.chat.register([1, 'Alice Archer'], [2, 'Bruno'])

  async function request(method: 'GET' | 'POST', path: string, headers: Record<string, string>, form?: object) {
    const all = form ? { ...headers, 'content-type': 'application/x-www-form-urlencoded' } : headers
    const response = await fetch(`${telegram.chat.base}${path}`, {
      method,
      headers: signedHeaders(SERVICE_SECRET, method, path, all),
      body: form ? new URLSearchParams(form as Record<string, string>).toString() : undefined,
      redirect: 'manual',
    })
    return {
      status: response.status,
      location: response.headers.get('location') ?? '',
      html: await response.text(),
      headers: response.headers,
    } satisfies PageAnswer
  }
  return {
    ...telegram,
    db: database.db,
    get: (headers: Record<string, string>, query = '') => request('GET', `${PAGE}${query}`, headers),
    post: (action: string, headers: Record<string, string>, form: object) =>
      request('POST', `${PAGE}/${action}`, headers, form),
    actions: () => database.db.selectFrom('admin_actions').selectAll().orderBy('timetick').execute(),
  }
}

const WIDGET = {
  name: 'busy_day',
  title: 'Busy day',
  template: 'Messages today: {messages_today}\r\nFiles: {files_stored} ({file_storage})',
  scope: 'support',
  refresh_seconds: '30',
}

/** The text of the page's notice, if any. */
function noticeOf(html: string): string | undefined {
  return /<p class="notice[^"]*" role="status">([^<]*)<\/p>/.exec(html)?.[1]
}

forEachDialect('only operators reach the widget page and its actions', async (t, dialect) => {
  const pages = await startPages(t, dialect)
  // The page comes back after signing in; an action, whose form is gone, goes back to the dashboard.
  const signIn = `/chat/sign-in?next=${encodeURIComponent(PAGE)}`
  const signInFromAction = `/chat/sign-in?next=${encodeURIComponent('/ChatAdmin')}`
  const anonymous = {}
  const member = { 'X-Crm': '2', 'X-Scopes': 'support administrator' }
  for (const [action, form] of [
    ['create', WIDGET],
    ['edit', WIDGET],
    ['delete', { name: WIDGET.name }],
    ['preview', WIDGET],
  ] as const) {
    const refusedAnonymous = await pages.post(action, anonymous, form)
    assert.equal(refusedAnonymous.status, 303, action)
    assert.equal(refusedAnonymous.location, signInFromAction)
    const refused = await pages.post(action, member, form)
    assert.equal(refused.status, 403, action)
    assert.match(refused.html, /You need the admin scope/)
  }
  assert.equal((await pages.get(anonymous)).location, signIn)
  const forbidden = await pages.get(member)
  assert.equal(forbidden.status, 403)
  assert.match(forbidden.html, /You need the admin scope/)
  assert.doesNotMatch(forbidden.html, /messages_today/)
  assert.deepEqual(await pages.db.selectFrom('telegram_widgets').selectAll().execute(), [])
  assert.deepEqual(await pages.actions(), [])

  const shown = await pages.get(OPERATOR)
  assert.equal(shown.status, 200)
  assert.match(shown.headers.get('content-security-policy') ?? '', /default-src 'none'/)
  for (const name of ['today', 'messages', 'calls', 'support', 'deliveries', 'storage', 'people'])
    assert.match(shown.html, new RegExp(`<td><code>${name}</code></td>`))
  assert.match(shown.html, /No custom widgets yet/)
})

forEachDialect('an operator creates, edits and deletes a custom widget; each change is audited', async (t, dialect) => {
  const pages = await startPages(t, dialect)
  const created = await pages.post('create', OPERATOR, WIDGET)
  assert.equal(created.status, 303, created.html)
  assert.equal(created.location, `${PAGE}?Done=created&Widget=busy_day`)
  const listed = await pages.get(OPERATOR, '?Done=created&Widget=busy_day')
  assert.equal(noticeOf(listed.html), 'Widget busy_day created.')
  assert.match(listed.html, /<td><code>busy_day<\/code><\/td>\s*<td>Busy day<\/td>/)
  assert.match(listed.html, /Alice Archer \(1\)/)
  const [stored] = await pages.db.selectFrom('telegram_widgets').selectAll().execute()
  assert.equal(stored?.template, 'Messages today: {messages_today}\nFiles: {files_stored} ({file_storage})')
  assert.equal(stored?.scope, 'support')
  assert.equal(stored?.refresh_seconds, 30)

  const editForm = await pages.get(OPERATOR, '?Edit=busy_day')
  assert.match(editForm.html, /Edit widget busy_day/)
  assert.match(editForm.html, /name="name" value="busy_day" readonly/)
  const edited = await pages.post('edit', OPERATOR, { ...WIDGET, title: 'Quiet day', scope: '', refresh_seconds: '60' })
  assert.equal(edited.location, `${PAGE}?Done=saved&Widget=busy_day`)
  const after = await pages.db.selectFrom('telegram_widgets').selectAll().executeTakeFirst()
  assert.deepEqual([after?.title, after?.scope, after?.refresh_seconds], ['Quiet day', '', 60])

  const deleted = await pages.post('delete', OPERATOR, { name: 'busy_day' })
  assert.equal(deleted.location, `${PAGE}?Done=deleted&Widget=busy_day`)
  assert.deepEqual(await pages.db.selectFrom('telegram_widgets').selectAll().execute(), [])
  const missing = await pages.post('delete', OPERATOR, { name: 'busy_day' })
  assert.equal(missing.status, 404)
  assert.equal(noticeOf(missing.html), 'There is no custom widget &quot;busy_day&quot;.')

  const log = await pages.actions()
  assert.deepEqual(
    log.map((row) => [Number(row.crm_id), row.action, row.target, row.outcome]),
    [
      [1, 'create_widget', 'busy_day', 'ok'],
      [1, 'edit_widget', 'busy_day', 'ok'],
      [1, 'delete_widget', 'busy_day', 'ok'],
      [1, 'delete_widget', 'busy_day', 'refused: WidgetNotFound'],
    ],
  )
  assert.equal(JSON.parse(log[1]!.detail).title, 'Quiet day')
  assert.ok(log.every((row) => Number(row.at) > 0))
})

forEachDialect('a refused widget is shown again with what is wrong, and nothing is stored', async (t, dialect) => {
  const pages = await startPages(t, dialect)
  const cases: Array<[Partial<typeof WIDGET>, number, RegExp]> = [
    [{ template: 'Hello {nope}' }, 400, /Not a stat of the catalogue: \{nope\}/],
    [{ template: 'Hello {messages_today' }, 400, /Braces are only for placeholders/],
    [{ template: '' }, 400, /The template is 1–2000 characters/],
    [{ template: 'x'.repeat(2001) }, 400, /The template is 1–2000 characters/],
    [{ template: 'tab\there' }, 400, /control characters not/],
    [{ title: 'Two\nlines' }, 400, /The title is 1–100 characters on one line/],
    [{ refresh_seconds: '4' }, 400, /from 5 to 86400/],
    [{ refresh_seconds: '86401' }, 400, /from 5 to 86400/],
    [{ refresh_seconds: 'ten' }, 400, /from 5 to 86400/],
    [{ name: 'Busy Day' }, 400, /A widget name is 1–32/],
    [{ name: 'today' }, 409, /built-in widget/],
    [{ scope: 'admin support' }, 400, /A required scope is empty/],
  ]
  for (const [change, status, message] of cases) {
    const refused = await pages.post('create', OPERATOR, { ...WIDGET, ...change })
    assert.equal(refused.status, status, JSON.stringify(change))
    assert.match(noticeOf(refused.html) ?? '', message, JSON.stringify(change))
    // The form keeps what the operator typed.
    if (!change.title) assert.match(refused.html, /name="title" value="Busy day"/)
  }
  // NUL never reaches the database (PostgreSQL refuses it): the module's text rule answers first.
  const withNul = await pages.post('create', OPERATOR, { ...WIDGET, template: 'a\u0000b' })
  assert.equal(withNul.status, 400)
  // Fields the form does not have, or far past any rule, are refused by the schema (the envelope).
  for (const form of [
    { ...WIDGET, extra: 'x' },
    { ...WIDGET, template: 'x'.repeat(10_001) },
  ]) {
    const refused = await pages.post('create', OPERATOR, form)
    assert.equal(refused.status, 400)
    assert.equal(JSON.parse(refused.html).error.code, errorCodes.InvalidRequest.code)
  }
  assert.deepEqual(await pages.db.selectFrom('telegram_widgets').selectAll().execute(), [])
  const outcomes = (await pages.actions()).map((row) => row.outcome)
  assert.equal(outcomes.length, cases.length)
  assert.ok(outcomes.every((outcome) => outcome.startsWith('refused: ')))
})

forEachDialect(
  'a custom widget renders stats from the rows, in the preview and in the bot, for its scope only',
  async (t, dialect) => {
    const pages = await startPages(t, dialect)
    const { chat, api } = pages
    // Two messages and one 1.5 MB file today, one deleted file that does not count.
    const { chat: team } = await chat.user(1).ok('create_chat', { type: 2, name: 'Team', members: ['2'] })
    await chat.user(1).ok('send_message', { chat_id: team.id, content: 'hello' })
    await chat.user(2).ok('send_message', { chat_id: team.id, content: 'hi' })
    const base = {
      chat_id: Number(team.id),
      owner: 1,
      content: '',
      file_name: 'report.pdf',
      file_id: 0,
      file_type: 'application/pdf',
      timetick_update: 1,
      edited: 0,
      forwarded_from: 0,
      linked_message_id: 0,
      link_kind: 0,
    }
    await pages.db
      .insertInto('chat_mess')
      .values([
        { ...base, timetick: 1_000_001, file_size: 1_500_000, flags: ChatMessFlags.File },
        { ...base, timetick: 1_000_002, file_size: 9_000_000, flags: ChatMessFlags.File | ChatMessFlags.Deleted },
      ])
      .execute()

    const preview = await pages.post('preview', OPERATOR, WIDGET)
    assert.equal(preview.status, 200)
    assert.match(
      preview.html,
      /<pre class="card" aria-label="Preview">Busy day\n\nMessages today: 2\nFiles: 1 \(1\.5 MB\)\n\nUpdated /,
    )
    assert.deepEqual(await pages.actions(), [])
    assert.equal((await pages.post('create', OPERATOR, { ...WIDGET, refresh_seconds: '5' })).status, 303)

    // Ada is Bruno's Telegram; Bruno lacks the widget's scope until the profile sync grants it.
    const token = startTokenOf((await chat.user(2).ok('link_telegram')).url)
    await pages.update(messageUpdate(ADA, `/start ${token}`))
    await pages.update(messageUpdate(ADA, '/widget busy_day'))
    assert.match(pages.sentTo(ADA.id).at(-1) ?? '', /There is no widget "busy_day" for you/)
    const granted = await chat.call(
      'POST',
      '/private/v1/set_profiles',
      {},
      {
        profiles: [{ member: '2', name: 'Bruno', scopes: ['support'] }],
      },
    )
    assert.equal(granted.status, 200)
    await pages.update(messageUpdate(ADA, '/widgets'))
    assert.match(pages.sentTo(ADA.id).at(-1) ?? '', /\/widget busy_day: Busy day/)
    await pages.update(messageUpdate(ADA, '/widget busy_day'))
    const message = api.sent.at(-1)!
    assert.match(message.text, /^Busy day\n\nMessages today: 2\nFiles: 1 \(1\.5 MB\)\n\nUpdated \d\d:\d\d:\d\d UTC$/)

    // Deleting the widget stops its live message at the next refresh (5 s here).
    await pages.post('delete', OPERATOR, { name: 'busy_day' })
    await until(() => /was deleted/.test(api.textOf(ADA.id, message.messageId) ?? ''), 'the message to stop', 15_000)
    assert.deepEqual(await pages.db.selectFrom('telegram_widget_views').selectAll().execute(), [])
  },
)

test('parallel creates of one name store one widget (postgres)', onlyWithPostgres(), async (t) => {
  const pages = await startPages(t, 'postgres')
  const answers = await Promise.all(Array.from({ length: 8 }, () => pages.post('create', OPERATOR, WIDGET)))
  assert.deepEqual(answers.map((answer) => answer.status).sort(), [303, 409, 409, 409, 409, 409, 409, 409])
  assert.equal((await pages.db.selectFrom('telegram_widgets').selectAll().execute()).length, 1)
})
