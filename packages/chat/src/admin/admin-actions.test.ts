import assert from 'node:assert/strict'
import { ChatMessFlags } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { OPERATOR, startChatAdmin } from '../../test/admin.ts'
import { createGroup } from '../../test/support.ts'

const operator = String(OPERATOR.crm)

forEachDialect(
  'an operator archives and unarchives a chat; members see it, the audit keeps both',
  async (t, dialect) => {
    const { chat, admin, db } = await startChatAdmin(t, dialect)
    await chat.register([1, 'Alice Archer'], 2, [OPERATOR.crm!, 'Olga Operator'])
    const chatId = await createGroup(chat.user(1), [2])
    const archived = await admin.action('/ChatAdmin/ChatDetail/Archive', { ChatId: chatId, Archived: 'true' })
    assert.equal(archived.status, 303)
    assert.equal(archived.location, `/ChatAdmin/ChatDetail?ChatId=${chatId}&Done=archived`)
    const page = await admin.page('/ChatAdmin/ChatDetail', OPERATOR, { ChatId: chatId, Done: 'archived' })
    assert.match(page.html, /role="status">Chat archived/)
    assert.match(page.html, /Unarchive chat/)
    // The chat is read-only for its members now.
    const refused = await chat.user(1).post('send_message', { chat_id: chatId, content: 'still there?' })
    assert.equal(refused.status, 409)
    assert.equal(refused.error?.code, 3004 /* ChatArchived */)
    const info = await chat.user(2).read('get_chat_info', { chat_id: chatId })
    assert.equal(info.archived, true)

    await admin.action('/ChatAdmin/ChatDetail/Archive', { ChatId: chatId, Archived: 'false' })
    assert.equal((await chat.user(1).post('send_message', { chat_id: chatId, content: 'back' })).status, 200)
    const audit = await db.selectFrom('admin_actions').selectAll().orderBy('timetick').execute()
    assert.deepEqual(
      audit.map((row) => [String(row.crm_id), row.action, row.target, row.outcome]),
      [
        [operator, 'archive_chat', `chat:${chatId}`, 'ok'],
        [operator, 'unarchive_chat', `chat:${chatId}`, 'ok'],
      ],
    )
    // The dashboard shows the operator by name.
    const dashboard = await admin.page('/ChatAdmin')
    assert.match(dashboard.html, /Olga Operator \(900\)<\/td><td>unarchive_chat/)
  },
)

forEachDialect('an operator removes a member but never the owner; refusals are audited too', async (t, dialect) => {
  const { chat, admin, db } = await startChatAdmin(t, dialect)
  await chat.register(1, 2, 3, OPERATOR.crm!)
  const chatId = await createGroup(chat.user(1), [2, 3])
  const removed = await admin.action('/ChatAdmin/ChatDetail/RemoveMember', { ChatId: chatId, Member: '2' })
  assert.equal(removed.location, `/ChatAdmin/ChatDetail?ChatId=${chatId}&Done=member-removed`)
  const owner = await admin.action('/ChatAdmin/ChatDetail/RemoveMember', { ChatId: chatId, Member: '1' })
  assert.equal(owner.location, `/ChatAdmin/ChatDetail?ChatId=${chatId}&Failed=owner-stays`)
  const stranger = await admin.action('/ChatAdmin/ChatDetail/RemoveMember', { ChatId: chatId, Member: '77' })
  assert.equal(stranger.location, `/ChatAdmin/ChatDetail?ChatId=${chatId}&Failed=member-not-found`)
  const noChat = await admin.action('/ChatAdmin/ChatDetail/RemoveMember', { ChatId: '424242', Member: '2' })
  assert.equal(noChat.location, '/ChatAdmin/Chats?Failed=chat-not-found')
  const members = await chat.user(1).read('get_chat_members', { chat_id: chatId })
  assert.deepEqual(members.members.map((m: { member: string }) => m.member).sort(), ['1', '3'])
  // The removed member no longer reads the chat.
  assert.notEqual((await chat.user(2).get('get_chat_messages', { chat_id: chatId })).status, 200)
  const audit = await db.selectFrom('admin_actions').selectAll().orderBy('timetick').execute()
  assert.deepEqual(
    audit.map((row) => [row.action, row.target, row.detail, row.outcome]),
    [
      ['remove_member', `chat:${chatId}`, 'member:2', 'ok'],
      ['remove_member', `chat:${chatId}`, 'member:1', 'owner-stays'],
      ['remove_member', `chat:${chatId}`, 'member:77', 'member-not-found'],
      ['remove_member', 'chat:424242', 'member:2', 'chat-not-found'],
    ],
  )
  const page = await admin.page('/ChatAdmin/ChatDetail', OPERATOR, { ChatId: chatId, Failed: 'owner-stays' })
  assert.match(page.html, /class="notice error" role="status">The chat(&#39;|')s owner cannot be removed/)
})

forEachDialect(
  'an operator soft-deletes a message: members no longer see it, Messages shows it with ShowDeleted',
  async (t, dialect) => {
    const { chat, admin, db } = await startChatAdmin(t, dialect)
    await chat.register([1, 'Alice Archer'], 2, OPERATOR.crm!)
    const chatId = await createGroup(chat.user(1), [2])
    const spam = await chat.user(2).ok('send_message', { chat_id: chatId, content: 'buy cheap watches' })
    const kept = await chat.user(1).ok('send_message', { chat_id: chatId, content: 'welcome' })
    const deleted = await admin.action('/ChatAdmin/ChatDetail/DeleteMessage', { MessageId: spam.id })
    assert.equal(deleted.location, `/ChatAdmin/ChatDetail?ChatId=${chatId}&Done=message-deleted`)
    const row = await db
      .selectFrom('chat_mess')
      .select('flags')
      .where('timetick', '=', Number(spam.id))
      .executeTakeFirst()
    assert.equal((Number(row?.flags) & ChatMessFlags.Deleted) !== 0, true)
    const seen = await chat.user(1).read('get_chat_messages', { chat_id: chatId })
    assert.deepEqual(
      seen.messages.map((m: { id: string }) => m.id).filter((id: string) => id === spam.id || id === kept.id),
      [kept.id],
    )
    const live = await admin.page('/ChatAdmin/Messages', OPERATOR, { ChatId: chatId })
    assert.ok(!live.html.includes('buy cheap watches'))
    assert.ok(live.html.includes('welcome'))
    const all = await admin.page('/ChatAdmin/Messages', OPERATOR, { ChatId: chatId, ShowDeleted: 'true' })
    assert.match(all.html, /Deleted · Text<\/td><td>buy cheap watches/)
    const missing = await admin.action('/ChatAdmin/ChatDetail/DeleteMessage', { MessageId: '999999' })
    assert.equal(missing.location, '/ChatAdmin/Messages?Failed=message-not-found')
    const audit = await db
      .selectFrom('admin_actions')
      .select(['action', 'target', 'outcome'])
      .orderBy('timetick')
      .execute()
    assert.deepEqual(
      audit.map((entry) => [entry.action, entry.target, entry.outcome]),
      [
        ['delete_message', `message:${spam.id}`, 'ok'],
        ['delete_message', 'message:999999', 'message-not-found'],
      ],
    )
  },
)

forEachDialect('an operator takes a waiting support chat and can answer in it', async (t, dialect) => {
  const { chat, admin, db } = await startChatAdmin(t, dialect, {
    Support: { TeamCrmIds: ['50'], EscalateAfterSeconds: 1 },
  })
  await chat.register([100, 'Carla Customer'], 50, [OPERATOR.crm!, 'Olga Operator'])
  const support = await chat.user(100).ok('open_support_chat')
  await chat.user(100).ok('send_message', { chat_id: support.chat.id, content: 'My order never came' })
  const before = await admin.page('/ChatAdmin/Escalations')
  assert.match(before.html, /Carla Customer \(100\)/)
  assert.match(before.html, /My order never came/)
  assert.ok(!before.html.includes('http-equiv'), 'no refresh until the operator turns it on')
  assert.match(before.html, /Overdue after \d+ seconds/)
  const live = await admin.page('/ChatAdmin/Escalations?Live=1')
  assert.match(live.html, /<meta http-equiv="refresh" content="30"/)
  const taken = await admin.action('/ChatAdmin/Escalations/Take', { ChatId: support.chat.id })
  assert.equal(taken.location, '/ChatAdmin/Escalations?Done=escalation-taken')
  await chat.user(OPERATOR.crm!).ok('send_message', { chat_id: support.chat.id, content: 'On its way' })
  const after = await admin.page('/ChatAdmin/Escalations')
  assert.ok(!after.html.includes('My order never came'), 'answered: no longer waiting')
  // Taking it again, or taking a chat that is not a support chat, is refused and audited.
  const again = await admin.action('/ChatAdmin/Escalations/Take', { ChatId: support.chat.id })
  assert.equal(again.location, '/ChatAdmin/Escalations?Failed=already-member')
  const group = await createGroup(chat.user(50), [])
  const notSupport = await admin.action('/ChatAdmin/Escalations/Take', { ChatId: group })
  assert.equal(notSupport.location, '/ChatAdmin/Escalations?Failed=not-support-chat')
  const audit = await db.selectFrom('admin_actions').select(['action', 'outcome']).orderBy('timetick').execute()
  assert.deepEqual(
    audit.map((entry) => [entry.action, entry.outcome]),
    [
      ['take_escalation', 'ok'],
      ['take_escalation', 'already-member'],
      ['take_escalation', 'not-support-chat'],
    ],
  )
})

forEachDialect('an action form with wrong fields changes nothing and is refused with 400', async (t, dialect) => {
  const { chat, admin, db } = await startChatAdmin(t, dialect)
  await chat.register(1, 2, OPERATOR.crm!)
  const chatId = await createGroup(chat.user(1), [2])
  for (const form of [
    { ChatId: chatId } as Record<string, string>,
    { ChatId: chatId, Archived: 'yes' },
    { ChatId: 'x', Archived: 'true' },
  ]) {
    const answer = await admin.action('/ChatAdmin/ChatDetail/Archive', form)
    assert.equal(answer.status, 400, JSON.stringify(form))
  }
  const huge = await admin.action('/ChatAdmin/ChatDetail/Archive', {
    ChatId: chatId,
    Archived: 'true',
    pad: 'x'.repeat(10_000),
  })
  assert.equal(huge.status, 413)
  assert.deepEqual(await db.selectFrom('admin_actions').selectAll().execute(), [])
  const stored = await db
    .selectFrom('chats')
    .select('archived')
    .where('timetick', '=', Number(chatId))
    .executeTakeFirst()
  assert.equal(stored?.archived, 0)
})
