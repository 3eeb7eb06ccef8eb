import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Page } from 'playwright-core'
import { checkAccessibility } from './accessibility.ts'
import { createGroup, openPrivateChat, signedInPerson } from './steps.ts'
import { choosePerson, launchBrowser, startSystem } from './system.ts'

/** The typing line's text once it equals `text` (polling the page, no sleeps). */
async function typingLine(page: Page, text: string, timeout = 10_000) {
  await page.waitForFunction(
    (expected) => (document.querySelector('.typing-indicator')?.textContent ?? '') === expected,
    text,
    { timeout },
  )
}

test('typing shows in the other browser and ends by itself or with the message; presence in the header', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const system = await startSystem(t)
  const alice = await signedInPerson(browser, system, 'alice@example.com', 'Alice')
  const bob = await signedInPerson(browser, system, 'bob@example.com', 'Bob')
  const bobId = bob.crmId

  const chatId = await openPrivateChat(alice.page, bobId)
  await alice.page.getByRole('textbox', { name: 'Message' }).fill('Hi Bob')
  await alice.page.keyboard.press('Enter')
  await bob.page.locator(`[data-chat-id="${chatId}"]`).getByRole('link').click()
  await bob.page.locator('.message', { hasText: 'Hi Bob' }).waitFor()

  await t.test('the header says whether the peer is connected', async () => {
    // Bob has the messenger open, so his stream is live.
    await alice.page.locator('.conversation-header .presence.online', { hasText: 'online' }).waitFor()
    await bob.page.locator('.conversation-header .presence.online', { hasText: 'online' }).waitFor()
  })

  await t.test('typing shows on the other side and expires by itself', async () => {
    const field = alice.page.getByRole('textbox', { name: 'Message' })
    // At a person's pace (five seconds of keys): the composer signals at most every three seconds,
    // and the first keys may fall within three seconds of the signal sent while writing "Hi Bob".
    await field.pressSequentially('I am writing a long', { delay: 260 })
    // The last signal went within three seconds before this, so it is fresh until at least 3 s after.
    const typedUntil = Date.now()
    await typingLine(bob.page, 'Alice is typing…')
    assert.equal(await bob.page.getByRole('status').filter({ hasText: 'Alice is typing…' }).count(), 1)
    await checkAccessibility(bob.page, 'typing-indicator')
    await typingLine(alice.page, '')
    // Nothing renews it (Alice stopped typing): it goes after its six seconds.
    await typingLine(bob.page, '', 12_000)
    assert.ok(Date.now() - typedUntil > 2_000, 'it stayed while it was fresh')
  })

  await t.test('a sent message ends the typing at once', async () => {
    const field = alice.page.getByRole('textbox', { name: 'Message' })
    await field.pressSequentially(' answer', { delay: 100 })
    await typingLine(bob.page, 'Alice is typing…')
    await alice.page.keyboard.press('Enter')
    await bob.page.locator('.message', { hasText: 'I am writing a long answer' }).waitFor()
    // Well before the six seconds of the signal are over.
    await typingLine(bob.page, '', 2_000)
  })

  await t.test('the chat list shows who types in a chat, by name in a group, until the message comes', async () => {
    // A group of the two, named by Alice; Bob looks at the list with their private chat open.
    const groupId = await createGroup(alice.page, 'Planning')
    await alice.page.getByRole('button', { name: 'Chat info' }).click()
    await choosePerson(alice.page, 'Add a member', 'Bob')
    await alice.page.getByTestId('member-count').filter({ hasText: /^2$/ }).waitFor()
    await alice.page.locator('.chat-info-toggle').click()
    const rowOf = (id: string) => bob.page.locator(`[data-chat-id="${id}"] .chat-preview`)
    await bob.page.locator(`[data-chat-id="${groupId}"]`).waitFor()

    const field = alice.page.getByRole('textbox', { name: 'Message' })
    await field.pressSequentially('Agenda', { delay: 50 })
    await rowOf(groupId)
      .filter({ hasText: /^Alice is typing…$/ })
      .waitFor()
    // The open group's own line names her too (not "User" and digits).
    await bob.page.locator(`[data-chat-id="${groupId}"] a`).click()
    await typingLine(bob.page, 'Alice is typing…')
    await alice.page.keyboard.press('Enter')
    await rowOf(groupId)
      .filter({ hasText: /^Alice: Agenda$/ })
      .waitFor({ timeout: 2_000 })

    // In a private chat the row says only "typing…": the row is the peer's already.
    await alice.page.locator(`[data-chat-id="${chatId}"] a`).click()
    await field.pressSequentially('One more', { delay: 50 })
    await rowOf(chatId)
      .filter({ hasText: /^typing…$/ })
      .waitFor()
    await checkAccessibility(bob.page, 'chat-list-typing')
    await alice.page.keyboard.press('Enter')
    await rowOf(chatId)
      .filter({ hasText: /^One more$/ })
      .waitFor({ timeout: 2_000 })
  })

  await t.test('the peer shows offline once their last connection is gone for the grace period', async () => {
    await bob.context.close()
    // 15 s of grace, then the next presence answer (every 10 s).
    await alice.page.locator('.conversation-header .presence:not(.online)', { hasText: 'offline' }).waitFor({
      timeout: 40_000,
    })
    await checkAccessibility(alice.page, 'presence-offline')
  })

  assert.deepEqual([...alice.errors, ...bob.errors], [])
})
