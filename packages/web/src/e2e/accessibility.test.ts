import { test } from 'node:test'
import type { Page } from 'playwright-core'
import { checkAccessibility } from './accessibility.ts'
import { openPrivateChat, send } from './steps.ts'
import { choosePerson, launchBrowser, openPage, signInByEmail, startSystem } from './system.ts'

/** Opens a message's actions. */
async function openActions(page: Page, text: string) {
  await page.locator('.message', { hasText: text }).getByRole('button', { name: 'Actions', exact: true }).click()
}

test('every main screen of the client passes axe-core without serious or critical findings', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const system = await startSystem(t)
  const alice = await openPage(browser)
  const bob = await openPage(browser, { width: 390, height: 780 })

  await alice.page.goto(`${system.url}/chat/sign-in`)
  await checkAccessibility(alice.page, 'a11y-sign-in-email')
  await alice.page.getByRole('button', { name: 'Phone', exact: true }).click()
  await checkAccessibility(alice.page, 'a11y-sign-in-phone')
  await alice.page.getByRole('button', { name: 'Email', exact: true }).click()
  await alice.page.getByLabel('Email address').fill('alice@example.com')
  await alice.page.getByRole('button', { name: 'Send code' }).click()
  await alice.page.getByLabel('Sign-in code').waitFor()
  await checkAccessibility(alice.page, 'a11y-sign-in-code')
  const { code } = await system.mailTo('alice@example.com')
  await alice.page.getByLabel('Sign-in code').fill(code)
  await alice.page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await alice.page.getByTestId('my-crm-id').waitFor({ state: 'attached' })
  await alice.page.getByText('No chats yet').waitFor()
  await checkAccessibility(alice.page, 'a11y-messenger-empty')

  await bob.page.goto(`${system.url}/chat/sign-in`)
  const bobId = await signInByEmail(bob.page, system, 'bob@example.com')

  // A conversation with a reply, a reaction, a pinned message and Markdown.
  await alice.page.getByText('Profile', { exact: true }).click()
  await checkAccessibility(alice.page, 'a11y-profile')
  await alice.page.getByText('Profile', { exact: true }).click()
  const chatId = await openPrivateChat(alice.page, bobId)
  await send(alice.page, 'Release **1.2** is on Friday, see [notes](/chat/)', 'Release 1.2 is on Friday')
  await send(alice.page, 'Bring the `build` log 🚀', 'Bring the build log')
  await openActions(alice.page, 'Bring the')
  await checkAccessibility(alice.page, 'a11y-message-actions')
  await alice.page
    .locator('.message', { hasText: 'Bring the' })
    .getByRole('button', { name: 'Pin', exact: true })
    .click()
  await alice.page.locator('.pinned-bar').waitFor()
  await openActions(alice.page, 'Release')
  await alice.page
    .locator('.message', { hasText: 'Release' })
    .getByRole('button', { name: 'Reply', exact: true })
    .click()
  await send(alice.page, 'Ship it.')
  await openActions(alice.page, 'Ship it.')
  await alice.page.locator('.message', { hasText: 'Ship it.' }).getByRole('button', { name: 'React with 👍' }).click()
  await alice.page.locator('.reaction-chip').waitFor()
  await checkAccessibility(alice.page, 'a11y-conversation')

  await alice.page.getByRole('button', { name: 'Search', exact: true }).click()
  await alice.page.getByRole('searchbox', { name: 'Search messages' }).fill('Friday')
  await alice.page.keyboard.press('Enter')
  await alice.page.locator('.search-result').first().waitFor()
  await checkAccessibility(alice.page, 'a11y-message-search')
  await alice.page.getByRole('button', { name: 'Close search' }).click()

  await alice.page.getByRole('button', { name: 'Chat info' }).click()
  await checkAccessibility(alice.page, 'a11y-chat-info-private')
  await alice.page.getByRole('link', { name: 'Files in this chat' }).click()
  await alice.page.waitForURL(`${system.url}/chat/files/${chatId}`)
  await alice.page.getByRole('link', { name: 'Back to the chat' }).waitFor()
  await checkAccessibility(alice.page, 'a11y-file-browser')
  await alice.page.getByRole('link', { name: 'Back to the chat' }).click()

  // A group with its members panel, and the forms to create one.
  await alice.page.getByText('New group or channel').click()
  await checkAccessibility(alice.page, 'a11y-new-group')
  await alice.page.getByLabel('Name', { exact: true }).fill('Release crew')
  await alice.page.getByRole('button', { name: 'Create group' }).click()
  await alice.page.getByRole('heading', { name: 'Release crew' }).waitFor()
  await alice.page.getByRole('button', { name: 'Chat info' }).click()
  await choosePerson(alice.page, 'Add a member', bobId)
  await alice.page.getByTestId('member-count').filter({ hasText: /^2$/ }).waitFor()
  await checkAccessibility(alice.page, 'a11y-members-panel')

  // The other person's screen on a phone: the list with an unread badge, then the conversation.
  await bob.page.locator(`[data-chat-id="${chatId}"] .unread-badge`).waitFor()
  await checkAccessibility(bob.page, 'a11y-chat-list-phone')
  await bob.page.locator(`[data-chat-id="${chatId}"] a`).click()
  await bob.page.locator('.message', { hasText: 'Ship it.' }).waitFor()
  await checkAccessibility(bob.page, 'a11y-conversation-phone')

  // A guest through an invite link.
  await alice.page.getByRole('button', { name: 'Create a guest invite link' }).click()
  const link = await alice.page.getByLabel('Invite link').inputValue()
  const guest = await openPage(browser, { width: 375, height: 740 })
  await guest.page.goto(link)
  await guest.page.getByRole('heading', { name: 'Release crew' }).waitFor()
  await checkAccessibility(guest.page, 'a11y-guest')

  // Pages that say something is not there.
  await alice.page.goto(`${system.url}/chat/no/such/page`)
  await alice.page.getByRole('heading', { name: 'Page not found' }).waitFor()
  await checkAccessibility(alice.page, 'a11y-not-found')
  await alice.page.goto(`${system.url}/chat/c/999999999`)
  await alice.page.getByText('This chat does not exist, or you are not a member of it.').waitFor()
  await checkAccessibility(alice.page, 'a11y-chat-missing')
})
