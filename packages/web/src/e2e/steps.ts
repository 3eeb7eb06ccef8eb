import type { Browser, Page } from 'playwright-core'
import { choosePerson, openPage, type System, signInByEmail } from './system.ts'

/** Steps a person takes in the messenger that many browser tests share. */

/** Saves a display name in the profile, as a person names themself. */
export async function setDisplayName(page: Page, name: string) {
  await page.getByText('Profile', { exact: true }).click()
  await page.getByLabel('Display name').fill(name)
  await page.getByRole('button', { name: 'Save name' }).click()
  await page.getByText(`Others now see you as ${name}.`).waitFor()
  await page.getByText('Profile', { exact: true }).click()
}

/** Opens the private chat with `peer` (their id, name or full email) from the chat list; returns the chat id. */
export async function openPrivateChat(page: Page, peer: string): Promise<string> {
  // The form stays open after a chat was opened with it.
  if (!(await page.getByRole('combobox', { name: 'Find a person' }).isVisible()))
    await page.getByText('New private chat').click()
  const before = new URL(page.url()).pathname
  await choosePerson(page, 'Find a person', peer)
  await page.waitForURL((url) => url.pathname !== before && /^\/chat\/c\/\d+$/.test(url.pathname))
  return new URL(page.url()).pathname.split('/').at(-1)!
}

/** Creates a group named `name` from the sidebar, which opens it; returns the chat id. */
export async function createGroup(page: Page, name: string): Promise<string> {
  await page.getByText('New group or channel').click()
  await page.getByLabel('Name', { exact: true }).fill(name)
  await page.getByRole('button', { name: 'Create group' }).click()
  await page.getByRole('heading', { name }).waitFor()
  return new URL(page.url()).pathname.split('/').at(-1)!
}

/**
 * Holds the page's requests to `url` (a glob) until the returned function is called, which lets
 * them go on; later ones pass at once.
 */
export async function holdRequests(page: Page, url: string): Promise<() => void> {
  let release = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  await page.route(url, async (route) => {
    await held
    await route.continue()
  })
  return release
}

/** Writes a message in the open conversation; returns its id once it shows as sent (as `shown`, rendered). */
export async function send(page: Page, text: string, shown = text): Promise<string> {
  await page.getByRole('textbox', { name: 'Message' }).fill(text)
  await page.keyboard.press('Enter')
  const sent = page.locator('.message.mine', { hasText: shown }).last()
  await sent.waitFor()
  return (await sent.getAttribute('data-message-id')) ?? ''
}

/** The texts of the messages shown in the open conversation, oldest first. */
export async function shownMessages(page: Page): Promise<string[]> {
  return page.locator('.messages .message-content').allInnerTexts()
}

/** A new browser page signed in by email code as `email`, named `name`; with the person's CRM id. */
export async function signedInPerson(browser: Browser, system: System, email: string, name: string) {
  const opened = await openPage(browser)
  await opened.page.goto(`${system.url}/chat/`)
  const crmId = await signInByEmail(opened.page, system, email)
  await setDisplayName(opened.page, name)
  return { ...opened, crmId }
}
