import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { test } from 'node:test'
import { createDatabase, type DatabaseDialect, FeedbackType } from '@atrium/platform'
import { createTestDatabaseUrl, forEachDialect } from '@atrium/platform/testing'
import type { Page } from 'playwright-core'
import type { ChatDatabase } from '../../../chat/src/db/schema.ts'
import { runCli } from '../../../gateway/src/cli/cli.ts'
import { SERVICE_SECRET } from '../../../gateway/test/support.ts'
import { checkAccessibility } from './accessibility.ts'
import { setDisplayName, shownMessages } from './steps.ts'
import { launchBrowser, openPage, type System, signInByEmail, startSystem } from './system.ts'

/**
 * The client contexts of the spec (issue 16, item 3): the support chat and its team, a feedback
 * rating, a discussion about an object, and the modes that show only their contexts.
 */

const WELCOME = 'Hello! Tell us what happened and the support team will answer here.'

/**
 * A gateway database holding users made with `atrium user create`, so their CRM ids are known
 * before the system starts (the chat module's Support.TeamCrmIds names them).
 */
async function gatewayWithUsers(t: TestContext, dialect: DatabaseDialect, emails: string[]) {
  const url = await createTestDatabaseUrl(t, dialect)
  const ids: string[] = []
  for (const email of emails) {
    let out = ''
    const code = await runCli(
      ['user', 'create', '--email', email, '--json'],
      { GatewayDB: url, ServiceSecret: SERVICE_SECRET },
      { out: (text) => (out += text), err: () => {} },
    )
    assert.equal(code, 0)
    ids.push(JSON.parse(out).crmId)
  }
  return { url, ids }
}

/** The chat module's database of a running system, to check what it stored. */
function chatDatabase(t: TestContext, system: System) {
  const database = createDatabase<ChatDatabase>(system.chat.database)
  t.after(() => database.destroy())
  return database.db
}

/** Signs in on the sign-in page (open) by email code, for a page that is not the messenger. */
async function signInWithoutMessenger(page: Page, system: System, email: string) {
  await page.getByLabel('Email address').fill(email)
  await page.getByRole('button', { name: 'Send code' }).click()
  await page.getByLabel('Sign-in code').waitFor()
  const { code } = await system.mailTo(email)
  await page.getByLabel('Sign-in code').fill(code)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
}

forEachDialect(
  'a customer opens /chat/support, gets the welcome and writes; the team sees it live, as an escalation, and answers',
  async (t, dialect) => {
    const browser = await launchBrowser(t)
    if (!browser) return
    const gatewayDb = await gatewayWithUsers(t, dialect, ['team@example.com'])
    const [teamId] = gatewayDb.ids
    const system = await startSystem(
      t,
      dialect,
      { GatewayDB: gatewayDb.url },
      { mode: 'support', support: { teamCrmIds: [teamId], welcomeMessage: WELCOME } },
      { Support: { TeamCrmIds: [teamId], WelcomeMessage: WELCOME, EscalateAfterSeconds: 1 } },
    )
    const team = await openPage(browser)
    await team.page.goto(`${system.url}/chat/`)
    assert.equal(await signInByEmail(team.page, system, 'team@example.com'), teamId)
    await setDisplayName(team.page, 'Sam from Support')
    await team.page.getByText('No chats yet').waitFor()

    const customer = await openPage(browser)
    await customer.page.goto(`${system.url}/chat/`)
    const customerId = await signInByEmail(customer.page, system, 'ada@example.com')
    await setDisplayName(customer.page, 'Ada Customer')
    await customer.page.goto(`${system.url}/chat/support`)
    await customer.page.getByRole('heading', { name: 'Support' }).waitFor()
    await customer.page.locator('.messages .message-content', { hasText: WELCOME }).waitFor()
    assert.equal(new URL(customer.page.url()).pathname, '/chat/support', 'the address stays /chat/support')
    await customer.page.getByRole('textbox', { name: 'Message' }).fill('My parcel never arrived.')
    await customer.page.keyboard.press('Enter')
    await customer.page.locator('.message.mine', { hasText: 'My parcel never arrived.' }).waitFor()

    // The team member's list gets the chat live, named after the customer, with their message.
    const teamsChat = team.page.locator('.chat-list li', { hasText: 'Support: Ada Customer' })
    await teamsChat.filter({ hasText: 'My parcel never arrived.' }).waitFor()
    const chatId = (await teamsChat.getAttribute('data-chat-id')) ?? ''
    const stored = await chatDatabase(t, system)
      .selectFrom('chats')
      .select(['timetick', 'pair_key'])
      .where('pair_key', '=', `support:${customerId}`)
      .execute()
    assert.deepEqual(
      stored.map((row) => String(row.timetick)),
      [chatId],
    )
    // Unanswered for longer than EscalateAfterSeconds (1 s here), it is an escalation for the team.
    const escalations = team.page.getByRole('region', { name: /Waiting for an answer/ })
    await escalations.getByRole('link', { name: 'Ada Customer' }).waitFor()
    await checkAccessibility(team.page, 'support-team-escalation')

    await escalations.getByRole('link', { name: 'Ada Customer' }).click()
    await team.page.waitForURL(`${system.url}/chat/c/${chatId}`)
    await team.page.locator('.messages .message-content', { hasText: 'My parcel never arrived.' }).waitFor()
    assert.deepEqual(await shownMessages(team.page), [WELCOME, 'My parcel never arrived.'])
    await team.page.getByRole('textbox', { name: 'Message' }).fill('Sorry about that, we are sending a new one today.')
    await team.page.keyboard.press('Enter')

    await customer.page.locator('.messages .message-content', { hasText: 'we are sending a new one' }).waitFor()
    await escalations.waitFor({ state: 'detached' })
    await checkAccessibility(customer.page, 'support-customer')
    await checkAccessibility(team.page, 'support-team-answered')
    assert.deepEqual([...customer.errors, ...team.errors], [])
  },
)

test('a feedback rating is stored with its comment; types the client does not allow are refused in words', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const system = await startSystem(t, 'sqlite', {}, { mode: 'feedback', feedback: { types: [FeedbackType.Order] } })
  const { page, errors } = await openPage(browser)
  await page.goto(`${system.url}/chat/feedback/order/A-1042`)
  await page.waitForURL(/\/chat\/sign-in\?next=/)
  await signInWithoutMessenger(page, system, 'rater@example.com')
  await page.getByRole('heading', { name: 'How was order A-1042?' }).waitFor()

  const send = page.getByRole('button', { name: 'Send feedback' })
  await send.click()
  const alert = page.getByRole('alert').getByText('Choose a rating from 1 to 5 stars first.')
  await alert.waitFor()
  // The stars are a radio group: a click picks one, arrow keys move along it.
  await page.locator('label[for="rating-2"]').click()
  await alert.waitFor({ state: 'detached' })
  await page.keyboard.press('ArrowRight')
  await page.keyboard.press('ArrowRight')
  assert.equal(await page.getByRole('radio', { name: '4 stars: Good' }).isChecked(), true)
  await page.getByLabel('Comment (optional)').fill('Arrived a day early, well packed.')
  await checkAccessibility(page, 'feedback-rating')
  await send.click()
  await page.getByRole('heading', { name: 'Thank you for your feedback' }).waitFor()
  await page.getByText('You rated it 4 of 5: positive feedback.').waitFor()
  await checkAccessibility(page, 'feedback-thanks')

  const rows = await chatDatabase(t, system)
    .selectFrom('feedback')
    .select(['object_type', 'object_id', 'rating', 'comment'])
    .execute()
  assert.deepEqual(rows, [
    { object_type: FeedbackType.Order, object_id: 'A-1042', rating: 4, comment: 'Arrived a day early, well packed.' },
  ])

  await page.goto(`${system.url}/chat/feedback/product/sku-1`)
  await page.getByRole('heading', { name: 'Feedback not accepted' }).waitFor()
  await page.getByText('This site does not take feedback on products.').waitFor()
  await page.goto(`${system.url}/chat/feedback/invoice/7`)
  await page.getByRole('heading', { name: 'Nothing to rate here' }).waitFor()
  assert.deepEqual(errors, [])
})

forEachDialect('a discussion about an order is created once and joined by a second user', async (t, dialect) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const system = await startSystem(t, dialect)
  const alice = await openPage(browser)
  await alice.page.goto(`${system.url}/chat/discuss/order/A-1042`)
  await signInByEmail(alice.page, system, 'alice@example.com')
  await setDisplayName(alice.page, 'Alice')
  await alice.page.getByRole('heading', { name: 'Discussion: Order A-1042' }).waitFor()
  await alice.page.getByRole('textbox', { name: 'Message' }).fill('Has anyone seen this order ship?')
  await alice.page.keyboard.press('Enter')
  await alice.page.locator('.message.mine', { hasText: 'Has anyone seen this order ship?' }).waitFor()

  // The numeric type names the same object: Bob joins the same chat and reads what came before.
  const bob = await openPage(browser)
  await bob.page.goto(`${system.url}/chat/discuss/${FeedbackType.Order}/A-1042`)
  await signInByEmail(bob.page, system, 'bob@example.com')
  await bob.page.getByRole('heading', { name: 'Discussion: Order A-1042' }).waitFor()
  await bob.page.locator('.messages .message-content', { hasText: 'Has anyone seen this order ship?' }).waitFor()
  await bob.page.locator('.conversation-header .chat-kind', { hasText: 'Discussion · 2 members' }).waitFor()
  await bob.page.getByRole('textbox', { name: 'Message' }).fill('It left the warehouse this morning.')
  await bob.page.keyboard.press('Enter')
  await alice.page.locator('.messages .message-content', { hasText: 'It left the warehouse this morning.' }).waitFor()
  await checkAccessibility(bob.page, 'discussion-joined')

  const db = chatDatabase(t, system)
  const chats = await db.selectFrom('chats').select('timetick').where('pair_key', '=', 'discuss:4:A-1042').execute()
  assert.equal(chats.length, 1)
  const members = await db
    .selectFrom('chat_members')
    .select('member')
    .where('chat_id', '=', chats[0]!.timetick)
    .execute()
  assert.equal(members.length, 2)
  assert.deepEqual([...alice.errors, ...bob.errors], [])
})

test('each mode shows only its contexts; a turned-off context says so in words', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const { page, errors } = await openPage(browser)
  const offered = {
    support: { support: true, feedback: false, discuss: false, calls: false },
    feedback: { support: false, feedback: true, discuss: true, calls: false },
    full: { support: false, feedback: true, discuss: true, calls: true },
  }
  const routes = {
    support: '/chat/support',
    feedback: '/chat/feedback/order/1',
    discuss: '/chat/discuss/order/1',
    calls: '/chat/calls',
  }
  const titles = { support: 'Support chat', feedback: 'Feedback', discuss: 'Discussions', calls: 'Calls' }
  for (const [mode, contexts] of Object.entries(offered)) {
    const system = await startSystem(t, 'sqlite', {}, { mode })
    for (const [context, on] of Object.entries(contexts) as [keyof typeof routes, boolean][]) {
      await page.goto(`${system.url}${routes[context]}`)
      if (on) {
        // An offered context asks for sign-in and comes back to it.
        await page.waitForURL(`${system.url}/chat/sign-in?next=${encodeURIComponent(routes[context])}`)
      } else {
        await page.getByRole('heading', { name: `${titles[context]} not available` }).waitFor()
        await page.getByText(`is turned off in this deployment (client mode ${mode})`).waitFor()
        if (mode === 'full' && context === 'support') await checkAccessibility(page, 'context-turned-off')
      }
    }
  }
  assert.deepEqual(errors, [])
})
