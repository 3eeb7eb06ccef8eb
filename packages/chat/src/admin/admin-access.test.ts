import assert from 'node:assert/strict'
import { forEachDialect } from '@atrium/platform/testing'
import { ANONYMOUS, OPERATOR, startChatAdmin, USER } from '../../test/admin.ts'
import { createGroup } from '../../test/support.ts'

const PAGES = [
  '/ChatAdmin',
  '/ChatAdmin/',
  '/ChatAdmin/Chats',
  '/ChatAdmin/ChatDetail',
  '/ChatAdmin/Messages',
  '/ChatAdmin/Members',
  '/ChatAdmin/Feedback',
  '/ChatAdmin/UserFiles',
  '/ChatAdmin/FileStatistic',
  '/ChatAdmin/Calls',
  '/ChatAdmin/Escalations',
]

forEachDialect(
  'a non-operator gets 403 and anonymous callers are sent to sign in, on every page and action',
  async (t, dialect) => {
    const { chat, admin, db } = await startChatAdmin(t, dialect, { Support: { TeamCrmIds: ['50'] } })
    await chat.register(1, 2, 50, OPERATOR.crm!, USER.crm!)
    const chatId = await createGroup(chat.user(1), [2])
    const message = await chat.user(1).ok('send_message', { chat_id: chatId, content: 'keep me' })
    const actions: [string, Record<string, string>][] = [
      ['/ChatAdmin/ChatDetail/Archive', { ChatId: chatId, Archived: 'true' }],
      ['/ChatAdmin/ChatDetail/RemoveMember', { ChatId: chatId, Member: '2' }],
      ['/ChatAdmin/ChatDetail/DeleteMessage', { MessageId: message.id }],
      ['/ChatAdmin/Escalations/Take', { ChatId: chatId }],
    ]
    for (const path of PAGES) {
      const refused = await admin.page(path, USER, { ChatId: chatId })
      assert.equal(refused.status, 403, path)
      assert.match(refused.html, /You need the admin scope/, path)
      assert.equal(refused.headers.get('content-type'), 'text/html; charset=utf-8')
      assert.match(refused.headers.get('content-security-policy') ?? '', /default-src 'none'/)
      const anonymous = await admin.page(path, ANONYMOUS, { ChatId: chatId })
      assert.equal(anonymous.status, 303, path)
      const back = new URL(anonymous.location, 'http://x')
      assert.equal(back.pathname, '/chat/sign-in')
      assert.equal(back.searchParams.get('next'), `${path}?ChatId=${chatId}`)
      // A scope named like admin is not admin.
      const lookalike = await admin.page(path, { crm: USER.crm, scopes: 'chat administrator admins' })
      assert.equal(lookalike.status, 403, path)
    }
    for (const [path, form] of actions) {
      const refused = await admin.action(path, form, USER)
      assert.equal(refused.status, 403, path)
      assert.match(refused.html, /You need the admin scope/)
      const anonymous = await admin.action(path, form, ANONYMOUS)
      assert.equal(anonymous.status, 303, path)
      assert.equal(new URL(anonymous.location, 'http://x').pathname, '/chat/sign-in')
    }
    // Nothing happened: the chat is live, the member and the message stay, nobody joined, nothing was audited.
    const stored = await db
      .selectFrom('chats')
      .select('archived')
      .where('timetick', '=', Number(chatId))
      .executeTakeFirst()
    assert.equal(stored?.archived, 0)
    assert.deepEqual(
      (await chat.user(1).read('get_chat_members', { chat_id: chatId })).members
        .map((m: { member: string }) => m.member)
        .sort(),
      ['1', '2'],
    )
    const kept = await db
      .selectFrom('chat_mess')
      .select('flags')
      .where('timetick', '=', Number(message.id))
      .executeTakeFirst()
    assert.equal(kept?.flags, 0)
    assert.deepEqual(await db.selectFrom('admin_actions').selectAll().execute(), [])
    // The operator passes the same gate.
    for (const path of PAGES.filter((page) => !page.endsWith('ChatDetail'))) {
      assert.equal((await admin.page(path, OPERATOR)).status, 200, path)
    }
  },
)

forEachDialect('ChatDetail without a valid ChatId goes back to Chats', async (t, dialect) => {
  const { chat, admin } = await startChatAdmin(t, dialect)
  await chat.register(1, 2)
  const chatId = await createGroup(chat.user(1), [2])
  const queries: Record<string, string>[] = [
    {},
    { ChatId: '' },
    { ChatId: 'abc' },
    { ChatId: '0' },
    { ChatId: '-5' },
    { ChatId: '12345' },
    { ChatId: '1e5' },
  ]
  for (const query of queries) {
    const page = await admin.page('/ChatAdmin/ChatDetail', OPERATOR, query)
    assert.equal(page.status, 303, JSON.stringify(query))
    assert.equal(page.location, '/ChatAdmin/Chats', JSON.stringify(query))
  }
  const found = await admin.page('/ChatAdmin/ChatDetail', OPERATOR, { ChatId: chatId })
  assert.equal(found.status, 200)
  assert.match(found.html, /<h1>Team<\/h1>/)
})

forEachDialect('bad filters are refused with a 400 envelope naming the field', async (t, dialect) => {
  const { admin } = await startChatAdmin(t, dialect)
  for (const [path, query] of [
    ['/ChatAdmin/UserFiles', { MinSize: 'abc' }],
    ['/ChatAdmin/UserFiles', { FileType: 'exe' }],
    ['/ChatAdmin/UserFiles', { DateFrom: 'yesterday' }],
    ['/ChatAdmin/Chats', { Flags: 'secret' }],
    ['/ChatAdmin/Messages', { ChatId: '12a' }],
    ['/ChatAdmin/Messages', { OwnerId: 'a\u0000b' }],
  ] as const) {
    const page = await admin.page(path, OPERATOR, query)
    assert.equal(page.status, 400, `${path} ${JSON.stringify(query)}`)
    assert.equal(JSON.parse(page.html).error.code, 1000)
  }
})
