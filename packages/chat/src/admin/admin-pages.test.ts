import assert from 'node:assert/strict'
import { ChatMessFlags, ChatType, MemberRole, timetickAt } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { messageRow, nextLink, OPERATOR, startChatAdmin } from '../../test/admin.ts'
import { type ChatRow, newChatRow } from '../chats/chats.repository.ts'
import { newMemberRow } from '../members/members.repository.ts'

const DAY = 86_400_000
const FIRST_DAY = Date.UTC(2026, 9, 1)
const date = (offset: number) => new Date(FIRST_DAY + offset * DAY).toISOString().slice(0, 10)

/** The chat ids a Chats page links to, in page order. */
const chatLinks = (html: string) =>
  [...html.matchAll(/href="\/ChatAdmin\/ChatDetail\?ChatId=(\d+)">/g)].map((m) => Number(m[1]))

/** Follows next-page links from `path` and collects what `ids` finds on each page. */
async function allPages(
  admin: Awaited<ReturnType<typeof startChatAdmin>>['admin'],
  path: string,
  ids: (html: string) => unknown[],
) {
  const seen: unknown[] = []
  let url: string | undefined = path
  while (url) {
    const [pathname, search = ''] = url.split('?') as [string, string?]
    const page = await admin.page(pathname, OPERATOR, Object.fromEntries(new URLSearchParams(search)))
    assert.equal(page.status, 200, url)
    seen.push(...ids(page.html))
    url = nextLink(page.html)
  }
  return seen
}

forEachDialect(
  'Chats filters by kind, name and creation date, newest first, and pages with a cursor',
  async (t, dialect) => {
    const { chat, admin, db } = await startChatAdmin(t, dialect)
    await chat.register([1, 'Alice Archer'], [2, 'Bob Baker'])
    const kinds = [ChatType.Group, ChatType.Private, ChatType.InfoChannel]
    const chats: ChatRow[] = Array.from({ length: 30 }, (_, index) => {
      const tick = timetickAt(FIRST_DAY + (index % 6) * DAY + index * 1000)
      const type = kinds[index % 3]!
      return newChatRow(tick, {
        type,
        owner: 1,
        name: type === ChatType.Private ? '' : `${index % 2 ? 'Sales' : 'Support desk'} ${index}`,
        archived: index % 5 === 0 ? 1 : 0,
        pair_key: type === ChatType.Private ? `1:${1000 + index}` : `#${tick}`,
      })
    })
    await db.insertInto('chats').values(chats).execute()
    const expected = (keep: (chat: ChatRow) => boolean) =>
      chats
        .filter(keep)
        .sort((a, b) => b.timetick - a.timetick)
        .map((chat) => chat.timetick)
    const created = (chat: ChatRow) => Math.floor(chat.timetick / 4096) + Date.UTC(2020, 0, 1)
    const cases: [Record<string, string>, (chat: ChatRow) => boolean][] = [
      [{}, () => true],
      [{ Flags: 'group' }, (c) => c.type === ChatType.Group],
      [{ Flags: 'private' }, (c) => c.type === ChatType.Private],
      [{ Flags: 'channel' }, (c) => c.type === ChatType.InfoChannel],
      [{ Flags: 'archived' }, (c) => c.archived === 1],
      [{ Name: 'Sales' }, (c) => c.name.includes('Sales')],
      [{ Name: 'sales' }, (c) => c.name.includes('sales')],
      [{ DateFrom: date(2) }, (c) => created(c) >= FIRST_DAY + 2 * DAY],
      [{ DateTo: date(1) }, (c) => created(c) < FIRST_DAY + 2 * DAY],
      [
        { Flags: 'group', Name: 'Support', DateFrom: date(1), DateTo: date(4) },
        (c) =>
          c.type === ChatType.Group &&
          c.name.includes('Support') &&
          created(c) >= FIRST_DAY + DAY &&
          created(c) < FIRST_DAY + 5 * DAY,
      ],
    ]
    for (const [query, keep] of cases) {
      const page = await admin.page('/ChatAdmin/Chats', OPERATOR, query)
      assert.deepEqual(chatLinks(page.html), expected(keep), JSON.stringify(query))
    }
    assert.deepEqual(
      await allPages(admin, '/ChatAdmin/Chats?Limit=4', chatLinks),
      expected(() => true),
    )
    // A private chat without a name is shown by its people's names.
    const privates = await admin.page('/ChatAdmin/Chats', OPERATOR, { Flags: 'private', Limit: '1' })
    assert.match(privates.html, /Alice Archer and 10\d\d/)
  },
)

forEachDialect('Members lists one chat or one person and pages by key', async (t, dialect) => {
  const { chat, admin, db } = await startChatAdmin(t, dialect)
  await chat.register([7, 'Greta Green'])
  const rows = []
  for (let chatId = 1; chatId <= 6; chatId++) {
    for (let member = 1; member <= 9; member++)
      if ((chatId + member) % 3 !== 0) rows.push(newMemberRow(chatId, member, 0, chatId * 100 + member))
  }
  await db.insertInto('chat_members').values(rows).execute()
  const key = (html: string) =>
    [
      ...html.matchAll(
        /ChatDetail\?ChatId=(\d+)">[^<]*<\/a><\/td>\s*<td><a href="\/ChatAdmin\/Members\?MemberId=(\d+)"/g,
      ),
    ].map((m) => `${m[1]}:${m[2]}`)
  const all = rows.map((row) => `${row.chat_id}:${row.member}`)
  assert.deepEqual(await allPages(admin, '/ChatAdmin/Members?Limit=5', key), all)
  assert.deepEqual(
    await allPages(admin, '/ChatAdmin/Members?ChatId=4&Limit=2', key),
    all.filter((k) => k.startsWith('4:')),
  )
  assert.deepEqual(
    await allPages(admin, '/ChatAdmin/Members?MemberId=7&Limit=2', key),
    all.filter((k) => k.endsWith(':7')),
  )
  assert.match((await admin.page('/ChatAdmin/Members', OPERATOR, { MemberId: '7' })).html, /Greta Green \(7\)/)

  // A mute shows its end; one whose end has passed is over.
  const ends = Date.UTC(2099, 0, 2, 3, 4, 5)
  const mute = (member: number, until: number) =>
    db
      .updateTable('chat_members')
      .set({ role: MemberRole.Muted, muted_until: until })
      .where('chat_id', '=', 1)
      .where('member', '=', member)
      .execute()
  await mute(1, ends)
  await mute(4, Date.now() - 1000)
  const roles = [
    ...(await admin.page('/ChatAdmin/Members', OPERATOR, { ChatId: '1' })).html.matchAll(
      /MemberId=(\d+)"[^<]*<\/a><\/td>\s*<td>([^<]*)<\/td>/g,
    ),
  ].map((m) => [m[1], m[2]])
  assert.deepEqual(
    roles.find(([member]) => member === '1'),
    ['1', 'Member · muted until 2099-01-02 03:04:05 UTC'],
  )
  assert.deepEqual(
    roles.find(([member]) => member === '4'),
    ['4', 'Member'],
  )
})

forEachDialect('Messages pages newest first; Feedback and Calls show their rows with names', async (t, dialect) => {
  const { chat, admin, db } = await startChatAdmin(t, dialect)
  await chat.register([1, 'Alice Archer'], [2, 'Bob Baker'])
  const base = timetickAt(FIRST_DAY)
  const messages = Array.from({ length: 23 }, (_, index) =>
    messageRow({
      timetick: base + index * 4096,
      timetick_update: base + index * 4096,
      chat_id: 5,
      owner: 1 + (index % 2),
      content: `message number ${index}`,
      flags: index === 4 ? ChatMessFlags.Deleted : 0,
    }),
  )
  const call = messageRow({
    timetick: base + 100 * 4096,
    timetick_update: base + 100 * 4096,
    chat_id: 5,
    owner: 1,
    content: JSON.stringify({
      media: 'video',
      state: 'ended',
      caller: '1',
      callee: '2',
      answered_at: '2026-10-01T00:00:10.000Z',
      ended_at: '2026-10-01T00:04:15.000Z',
      duration: 245,
      end_reason: 'completed',
    }),
    flags: ChatMessFlags.Call,
  })
  await db
    .insertInto('chat_mess')
    .values([...messages, call])
    .execute()
  const texts = (html: string) => [...html.matchAll(/<td>message number (\d+)<\/td>/g)].map((m) => Number(m[1]))
  const visible = messages
    .filter((m) => m.flags === 0)
    .map((m) => Number(m.content.split(' ').at(-1)))
    .reverse()
  assert.deepEqual(await allPages(admin, '/ChatAdmin/Messages?ChatId=5&Limit=6', texts), visible)
  assert.deepEqual(
    await allPages(admin, '/ChatAdmin/Messages?OwnerId=2&Limit=6', texts),
    visible.filter((n) => n % 2 === 1),
  )

  const calls = await admin.page('/ChatAdmin/Calls')
  assert.match(
    calls.html,
    /<td>Alice Archer \(1\)<\/td><td>Bob Baker \(2\)<\/td><td>video<\/td><td>ended<\/td><td class="num">4 min 05 s<\/td><td>completed<\/td>/,
  )

  await chat.user(2).ok('create_feedback', { object_type: 1, object_id: 'app-7', rating: 2, comment: 'Too slow' })
  await chat.user(1).ok('create_feedback', { object_type: 3, object_id: 'sku-1', rating: 5, comment: 'Lovely' })
  const low = await admin.page('/ChatAdmin/Feedback', OPERATOR, { Rating: '2' })
  assert.match(low.html, /Bob Baker \(2\)/)
  assert.match(low.html, /Too slow/)
  assert.ok(!low.html.includes('Lovely'))
  const products = await admin.page('/ChatAdmin/Feedback', OPERATOR, { ObjectType: '3' })
  assert.match(products.html, /Lovely/)
  assert.ok(!products.html.includes('Too slow'))
})

forEachDialect('names written by users stay text on every page', async (t, dialect) => {
  const { chat, admin } = await startChatAdmin(t, dialect)
  const hostile = '<script>alert(1)</script>'
  await chat.register([1, hostile], 2)
  const { chat: group } = await chat.user(1).ok('create_chat', { type: ChatType.Group, name: hostile, members: ['2'] })
  await chat.user(1).ok('send_message', { chat_id: group.id, content: hostile })
  for (const path of ['/ChatAdmin/Chats', '/ChatAdmin/Messages', '/ChatAdmin/Members']) {
    const page = await admin.page(path)
    assert.ok(page.html.includes('&lt;script>alert(1)&lt;/script>'), path)
    assert.ok(!page.html.includes('<script>'), path)
  }
  const detail = await admin.page('/ChatAdmin/ChatDetail', OPERATOR, { ChatId: group.id })
  assert.ok(!detail.html.includes('<script>'))
})
