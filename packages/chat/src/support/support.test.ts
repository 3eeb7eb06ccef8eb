import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { createDatabase, type DatabaseDialect } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect, listen } from '@atrium/platform/testing'
import { createChatClient, SERVICE_SECRET, startChat } from '../../test/support.ts'
import { buildChat } from '../app.ts'
import { loadChatConfig } from '../config.ts'
import type { ChatDatabase } from '../db/schema.ts'

const TEAM = [901, 902]
const WELCOME = 'Hello! Tell us what happened and we will answer here.'
const ESCALATE_AFTER_SECONDS = 600

/** The chat module with a support team, a clock the test moves, and a connection to its database. */
async function startSupport(t: TestContext, dialect: DatabaseDialect, support: Record<string, unknown> = {}) {
  const url = await createTestDatabaseUrl(t, dialect)
  const clock = { offsetMs: 0 }
  const config = loadChatConfig(
    {
      ChatDB: url,
      ServiceSecret: SERVICE_SECRET,
      Support: {
        TeamCrmIds: TEAM.map(String),
        WelcomeMessage: WELCOME,
        EscalateAfterSeconds: ESCALATE_AFTER_SECONDS,
        ...support,
      },
    },
    {},
  )
  const app = await buildChat(config, { logger: { level: 'error' }, now: () => Date.now() + clock.offsetMs })
  const chat = createChatClient(await listen(t, app))
  const database = createDatabase<ChatDatabase>(url)
  t.after(() => database.destroy())
  return { chat, clock, db: database.db }
}

forEachDialect(
  'a customer opens one support chat with the team in it and the welcome message first',
  async (t, dialect) => {
    const { chat } = await startSupport(t, dialect)
    const first = await chat.user(100).ok('open_support_chat')
    assert.equal(first.created, true)
    assert.equal(first.chat.name, 'Support')
    assert.equal(first.chat.context, 'support')
    assert.equal(first.chat.customer, '100')
    const again = await chat.user(100).ok('open_support_chat')
    assert.deepEqual([again.created, again.chat.id], [false, first.chat.id])

    const { members } = await chat.user(100).read('get_chat_members', { chat_id: first.chat.id })
    assert.deepEqual(members.map((member: { member: string }) => member.member).sort(), ['100', ...TEAM.map(String)])
    const { messages } = await chat.user(100).read('get_chat_messages', { chat_id: first.chat.id })
    assert.deepEqual(
      messages.map((message: { owner: string; content: string }) => [message.owner, message.content]),
      [[String(TEAM[0]), WELCOME]],
    )
    // Another customer gets a chat of their own.
    const other = await chat.user(101).ok('open_support_chat')
    assert.notEqual(other.chat.id, first.chat.id)
  },
)

forEachDialect('the team sees a support chat named after its customer; outsiders see nothing', async (t, dialect) => {
  const { chat } = await startSupport(t, dialect)
  await chat.user(100).ok('update_profile', { name: 'Ada Customer' })
  const { chat: opened } = await chat.user(100).ok('open_support_chat')
  const { chats } = await chat.user(TEAM[1]!).read('get_chats')
  const seen = chats.find((listed: { id: string }) => listed.id === opened.id)
  assert.equal(seen.name, 'Support: Ada Customer')
  assert.equal(seen.customer, '100')
  assert.equal(seen.context, 'support')
  const outsider = await chat.user(555).get('get_chat_messages', { chat_id: opened.id })
  assert.equal(outsider.status, 404, 'a user outside the team cannot read the support chat')
})

forEachDialect(
  'parallel open_support_chat by one customer stores one chat, one welcome, each member once',
  async (t, dialect) => {
    const { chat, db } = await startSupport(t, dialect)
    await Promise.all(Array.from({ length: 12 }, () => chat.user(1).read('get_chats')))
    const answers = await Promise.all(Array.from({ length: 12 }, () => chat.user(100).post('open_support_chat')))
    assert.deepEqual(new Set(answers.map((answer) => answer.status)), new Set([200]))
    assert.equal(new Set(answers.map((answer) => answer.result.chat.id)).size, 1)
    assert.equal(answers.filter((answer) => answer.result.created).length, 1)
    const chats = await db.selectFrom('chats').select('timetick').where('pair_key', '=', 'support:100').execute()
    assert.equal(chats.length, 1)
    const members = await db
      .selectFrom('chat_members')
      .select('member')
      .where('chat_id', '=', chats[0]!.timetick)
      .execute()
    assert.deepEqual(members.map((row) => row.member).sort(), [100, ...TEAM])
    const messages = await db
      .selectFrom('chat_mess')
      .select('content')
      .where('chat_id', '=', chats[0]!.timetick)
      .execute()
    assert.deepEqual(messages, [{ content: WELCOME }])
  },
)

forEachDialect('without a support team, or for a guest, there is no support chat', async (t, dialect) => {
  const chat = await startChat(t, dialect)
  const answer = await chat.user(100).post('open_support_chat')
  assert.equal(answer.status, 503)
  assert.equal(answer.error?.code, 3020)
  const guest = await chat.guest('no-such-code', 'device-guid-1234').post('open_support_chat')
  assert.equal(guest.status, 401)
})

forEachDialect(
  'a customer message without a team answer becomes an escalation once EscalateAfterSeconds pass',
  async (t, dialect) => {
    const { chat, clock } = await startSupport(t, dialect)
    await chat.user(100).ok('update_profile', { name: 'Ada Customer' })
    const { chat: support } = await chat.user(100).ok('open_support_chat')
    const internal = async () => (await chat.call('GET', '/private/v1/support/escalations', {})).result.escalations
    assert.deepEqual(await internal(), [], 'the welcome message alone waits for nobody')

    const question = await chat.user(100).ok('send_message', { chat_id: support.id, content: 'My order is late' })
    await chat.user(100).ok('send_message', { chat_id: support.id, content: 'Any news?' })
    clock.offsetMs = ESCALATE_AFTER_SECONDS * 1000 - 5_000
    assert.deepEqual(await internal(), [], 'not yet escalated before EscalateAfterSeconds')

    clock.offsetMs = ESCALATE_AFTER_SECONDS * 1000 + 1_000
    const [escalation, ...more] = await internal()
    assert.equal(more.length, 0)
    assert.equal(escalation.chat_id, support.id)
    assert.equal(escalation.customer, '100')
    assert.equal(escalation.customer_name, 'Ada Customer')
    assert.equal(escalation.message_id, question.id)
    assert.equal(escalation.content, 'My order is late')
    assert.equal(escalation.unanswered, 2)
    assert.ok(escalation.waiting_seconds >= ESCALATE_AFTER_SECONDS, String(escalation.waiting_seconds))
    const forTeam = await chat.user(TEAM[1]!).read('get_support_escalations')
    // Both reads use the moving clock: waiting_seconds may tick over between them, nothing else.
    assert.equal(forTeam.escalations.length, 1)
    const [seen] = forTeam.escalations
    assert.deepEqual({ ...seen, waiting_seconds: escalation.waiting_seconds }, escalation)
    assert.ok([0, 1].includes(seen.waiting_seconds - escalation.waiting_seconds))
    assert.equal(forTeam.escalate_after_seconds, ESCALATE_AFTER_SECONDS)

    await chat.user(TEAM[1]!).ok('send_message', { chat_id: support.id, content: 'It ships today.' })
    assert.deepEqual(await internal(), [], 'a team answer ends the escalation')
  },
)

forEachDialect(
  'only the support team reads get_support_escalations, and it opens no support chat of its own',
  async (t, dialect) => {
    const { chat } = await startSupport(t, dialect)
    await chat.user(100).ok('open_support_chat')
    const own = await chat.user(TEAM[0]!).post('open_support_chat')
    assert.deepEqual([own.status, own.error?.code], [403, 1009], 'a team member has no support chat of their own')
    for (const caller of [chat.user(100), chat.user(555)]) {
      const answer = await caller.get('get_support_escalations')
      assert.equal(answer.status, 403)
      assert.equal(answer.error?.code, 1009)
    }
  },
)

forEachDialect('a changed team joins existing support chats when the customer opens them again', async (t, dialect) => {
  const url = await createTestDatabaseUrl(t, dialect)
  const start = async (team: string[]) => {
    const config = loadChatConfig({ ChatDB: url, ServiceSecret: SERVICE_SECRET, Support: { TeamCrmIds: team } }, {})
    return createChatClient(await listen(t, await buildChat(config, { logger: { level: 'error' } })))
  }
  const before = await start(['901'])
  const { chat: opened } = await before.user(100).ok('open_support_chat')
  const after = await start(['901', '903'])
  await after.user(100).ok('open_support_chat')
  const { members } = await after.user(100).read('get_chat_members', { chat_id: opened.id })
  assert.deepEqual(members.map((member: { member: string }) => member.member).sort(), ['100', '901', '903'])
})

forEachDialect(
  'the browser cannot choose the team: a body is refused and the customer cannot change members',
  async (t, dialect) => {
    const { chat } = await startSupport(t, dialect)
    const chosen = await chat.user(100).post('open_support_chat', { team_crm_ids: ['555'] })
    assert.equal(chosen.status, 400)
    assert.equal(chosen.error?.code, 1000)
    const { chat: opened } = await chat.user(100).ok('open_support_chat')
    const added = await chat.user(100).post('add_chat_member', { chat_id: opened.id, member: '555' })
    assert.equal(added.status, 403, 'the customer is a plain member, not an admin')
    const removed = await chat.user(100).post('remove_member', { chat_id: opened.id, member: String(TEAM[0]) })
    assert.equal(removed.status, 403)
    const { members } = await chat.user(100).read('get_chat_members', { chat_id: opened.id })
    assert.deepEqual(members.map((member: { member: string }) => member.member).sort(), ['100', ...TEAM.map(String)])
  },
)
