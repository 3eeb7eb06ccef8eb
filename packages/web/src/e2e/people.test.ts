import assert from 'node:assert/strict'
import { forEachDialect } from '@atrium/platform/testing'
import { checkAccessibility } from './accessibility.ts'
import { createGroup, setDisplayName } from './steps.ts'
import { choosePerson, launchBrowser, openPage, signInByEmail, startSystem } from './system.ts'

// Issue 16, item 1: people are names and faces, found by name or email, renamed live.
forEachDialect('people are found by name or email, shown by name everywhere and renamed live', async (t, dialect) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const system = await startSystem(t, dialect)
  // Carol is made as `atrium user create --name … --email …` makes a user: straight in the gateway's store.
  const carol = await system.gateway.store.users.create({ name: 'Carol Created' })
  await system.gateway.store.users.addContact(carol.crm_id, 1, 'carol@example.com')

  const alice = await openPage(browser)
  const bob = await openPage(browser)
  await alice.page.goto(`${system.url}/chat/`)
  const aliceId = await signInByEmail(alice.page, system, 'alice@example.com')
  // Signed up without a name: the own header says who by email, never the id as the main label.
  assert.equal(await alice.page.locator('.me-name').textContent(), 'alice@example.com')
  // … while others see "User" and her id's last four digits, which the page tells her, asking for a name.
  const nudge = alice.page.locator('.name-nudge')
  assert.equal(
    await nudge.locator('p').first().textContent(),
    `Others see you as User ${aliceId.slice(-4)}. What name should they see?`,
  )
  await checkAccessibility(alice.page, 'name-nudge')
  // "Not now" puts it away on this browser, also after a reload.
  await nudge.getByRole('button', { name: 'Not now' }).click()
  await nudge.waitFor({ state: 'detached' })
  await alice.page.reload()
  await alice.page.locator('.me-name').waitFor()
  assert.equal(await nudge.count(), 0)
  await setDisplayName(alice.page, 'Alice Archer')
  // Bob names himself in the ask: a blank name is refused there, a real one replaces it.
  await bob.page.goto(`${system.url}/chat/`)
  await signInByEmail(bob.page, system, 'bob@example.com')
  const bobsNudge = bob.page.locator('.name-nudge')
  await bobsNudge.getByLabel('Your name').fill('   ')
  await bobsNudge.getByRole('button', { name: 'Use this name' }).click()
  assert.equal(await bobsNudge.getByRole('alert').textContent(), 'Type a name: spaces alone are not one.')
  await bobsNudge.getByLabel('Your name').fill('Bob Builder')
  await bobsNudge.getByRole('button', { name: 'Use this name' }).click()
  await bobsNudge.waitFor({ state: 'detached' })
  assert.equal(await bob.page.locator('.me-name').textContent(), 'Bob Builder')

  // Alice finds Bob by part of his name, with the keyboard.
  await alice.page.getByText('New private chat').click()
  const find = alice.page.getByRole('combobox', { name: 'Find a person' })
  await find.fill('bob b')
  const option = alice.page.getByRole('option', { name: 'Bob Builder' })
  await option.waitFor()
  assert.equal(await find.getAttribute('aria-expanded'), 'true')
  assert.equal(await option.getAttribute('aria-selected'), 'true')
  await checkAccessibility(alice.page, 'people-search')
  await find.press('Enter')
  await alice.page.getByRole('heading', { name: 'Bob Builder' }).waitFor()
  await alice.page.getByRole('textbox', { name: 'Message' }).fill('Hi Bob, found you by name')
  await alice.page.keyboard.press('Enter')
  // Bob's list names the chat after Alice, with her initials beside it.
  const bobsPair = bob.page.locator('.chat-list li', { hasText: 'Alice Archer' })
  await bobsPair.waitFor()
  assert.equal(await bobsPair.locator('.avatar').textContent(), 'AA')
  assert.equal(await bobsPair.locator('.avatar').getAttribute('aria-hidden'), 'true')

  // A part of an email address finds nobody; the full address finds its owner.
  await find.fill('carol@exa')
  await alice.page.getByText('Nobody found for “carol@exa”').waitFor()
  await find.fill('')

  // A group: Bob added by name, Carol by her full email address.
  await createGroup(alice.page, 'Crew')
  await alice.page.getByRole('button', { name: 'Chat info' }).click()
  await choosePerson(alice.page, 'Add a member', 'Builder')
  await alice.page.getByTestId('member-count').filter({ hasText: /^2$/ }).waitFor()
  await choosePerson(alice.page, 'Add a member', 'carol@example.com')
  await alice.page.getByTestId('member-count').filter({ hasText: /^3$/ }).waitFor()
  const memberNames = alice.page.locator('.member-list .member-name')
  await memberNames.filter({ hasText: 'Carol Created' }).waitFor()
  assert.deepEqual((await memberNames.allInnerTexts()).sort(), ['Bob Builder', 'Carol Created', 'You'])
  // Who is online: Alice and Bob have the messenger open, Carol never signed in (one answer says all three).
  const memberRow = (name: string) => alice.page.locator('.member-list li', { hasText: name })
  await memberRow('Bob Builder').locator('.presence.online', { hasText: 'online' }).waitFor()
  await memberRow('You').locator('.presence.online', { hasText: 'online' }).waitFor()
  assert.equal(await memberRow('Carol Created').locator('.presence').count(), 0)
  await checkAccessibility(alice.page, 'people-members')
  await alice.page.locator('.chat-info-toggle').click()

  // Bob writes in the group; Alice sees his name and initials as the sender.
  await bob.page.locator('.chat-list .chat-name', { hasText: 'Crew' }).click()
  await bob.page.getByRole('heading', { name: 'Crew' }).waitFor()
  await bob.page.getByRole('textbox', { name: 'Message' }).fill('Hello crew')
  await bob.page.keyboard.press('Enter')
  const fromBob = alice.page.locator('.message', { hasText: 'Hello crew' })
  await fromBob.locator('.sender', { hasText: 'Bob Builder' }).waitFor()
  assert.equal(await fromBob.locator('.avatar').textContent(), 'BB')
  await checkAccessibility(alice.page, 'people-group-senders')

  // Bob renames himself: Alice's open group and her chat list follow without a reload.
  await setDisplayName(bob.page, 'Robert Builder')
  await fromBob.locator('.sender', { hasText: 'Robert Builder' }).waitFor()
  await alice.page.locator('.chat-list .chat-name', { hasText: 'Robert Builder' }).waitFor()
  assert.equal(await alice.page.locator('.chat-list .chat-name', { hasText: 'Bob Builder' }).count(), 0)
  await checkAccessibility(alice.page, 'people-renamed-live')

  // An id that belongs to nobody is refused in words (the form is still open from before).
  await choosePerson(alice.page, 'Find a person', '123')
  await alice.page
    .getByRole('alert')
    .filter({ hasText: 'There is nobody with the user id 123 here. Find people by name or email instead.' })
    .waitFor()
  await checkAccessibility(alice.page, 'people-unknown-user')
  assert.equal(await alice.page.locator('.chat-list .chat-name', { hasText: '123' }).count(), 0)
  assert.notEqual(aliceId, '')
  // The browser logs the refused request (404) itself; nothing else went wrong.
  const refused = (error: string) => error.includes('status of 404') && error.includes('/msg/v1/create_private_chat')
  assert.deepEqual([...alice.errors.filter((error) => !refused(error)), ...bob.errors], [])
})
