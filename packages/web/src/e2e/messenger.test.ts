import assert from 'node:assert/strict'
import { test } from 'node:test'
import { forEachDialect, until } from '@atrium/platform/testing'
import type { Page } from 'playwright-core'
import { holdRequests, send, setDisplayName, shownMessages } from './steps.ts'
import { choosePerson, launchBrowser, openPage, type System, screenshot, startSystem } from './system.ts'

/** Signs in on the sign-in page by email code read from the SMTP sink; returns the user's CRM id. */
async function signInByEmail(page: Page, system: System, email: string, shots = false): Promise<string> {
  await page.getByLabel('Email address').fill(email)
  if (shots) await screenshot(page, 'sign-in-email')
  await page.getByRole('button', { name: 'Send code' }).click()
  await page.getByLabel('Sign-in code').waitFor()
  if (shots) await screenshot(page, 'sign-in-code')
  const { code } = await system.mailTo(email)
  await page.getByLabel('Sign-in code').fill(code)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  return (await page.getByTestId('my-crm-id').textContent()) ?? ''
}

// On PostgreSQL too (when DATABASE_URL names one), so the client's main path runs on both dialects.
/** Waits for the tab's title to be `title` (effects run after the frame). */
const titled = (page: Page, title: string) =>
  page.waitForFunction((wanted) => document.title === wanted, title, { timeout: 5_000 })

forEachDialect(
  'two people sign in by email code, open a private chat and talk live, with unread badges',
  async (t, dialect) => {
    const browser = await launchBrowser(t)
    if (!browser) return
    const system = await startSystem(t, dialect)
    const alice = await openPage(browser)
    const bob = await openPage(browser)

    // Signed out, the messenger sends people to the sign-in page.
    await alice.page.goto(`${system.url}/chat/`)
    await alice.page.waitForURL(`${system.url}/chat/sign-in`)
    await titled(alice.page, 'Sign in · Atrium Chat')
    const aliceId = await signInByEmail(alice.page, system, 'alice@example.com', true)
    assert.equal(new URL(alice.page.url()).pathname, '/chat/')
    await setDisplayName(alice.page, 'Alice')

    await bob.page.goto(`${system.url}/chat/`)
    const bobId = await signInByEmail(bob.page, system, 'bob@example.com')
    await setDisplayName(bob.page, 'Bob')
    assert.notEqual(aliceId, bobId)
    await bob.page.getByText('No chats yet').waitFor()

    // Alice opens the private chat by Bob's user id and writes.
    await alice.page.getByText('New private chat').click()
    await choosePerson(alice.page, 'Find a person', bobId)
    await alice.page.waitForURL(/\/chat\/c\/\d+$/)
    const chatId = new URL(alice.page.url()).pathname.split('/').at(-1)!
    await alice.page.getByRole('heading', { name: 'Bob' }).waitFor()
    await alice.page.getByRole('textbox', { name: 'Message' }).fill('Hello Bob, are you there?')
    await alice.page.keyboard.press('Enter')
    await alice.page.locator('.message.mine', { hasText: 'Hello Bob, are you there?' }).waitFor()

    // Bob's list gets the chat live, with one unread message.
    const bobsChat = bob.page.locator(`[data-chat-id="${chatId}"]`)
    await bobsChat.locator('.unread-badge').waitFor()
    assert.equal(await bobsChat.locator('.chat-name').textContent(), 'Alice')
    assert.match((await bobsChat.locator('.unread-badge').textContent()) ?? '', /^1\s*unread$/)
    await screenshot(bob.page, 'messenger-unread-badge')

    await alice.page.getByRole('textbox', { name: 'Message' }).fill('Second message before you look')
    await alice.page.getByRole('button', { name: 'Send' }).click()
    await bobsChat.locator('.unread-badge', { hasText: '2' }).waitFor()
    // The tab says so too, unread count first; the open chat names the tab.
    await titled(bob.page, '(2) Atrium Chat')
    await titled(alice.page, 'Bob · Atrium Chat')

    // Opening the chat shows the history and clears the badge.
    await bobsChat.getByRole('link').click()
    await bob.page.waitForURL(`${system.url}/chat/c/${chatId}`)
    await bob.page.locator('.message', { hasText: 'Second message before you look' }).waitFor()
    assert.deepEqual(await shownMessages(bob.page), ['Hello Bob, are you there?', 'Second message before you look'])
    await bobsChat.locator('.unread-badge').waitFor({ state: 'detached' })
    await titled(bob.page, 'Alice · Atrium Chat')
    // Both were unread: the "New messages" line stands before the first of them.
    const afterLine = bob.page.locator('.unread-marker + li')
    assert.equal(await bob.page.getByRole('heading', { name: 'New messages' }).count(), 1)
    assert.match((await afterLine.textContent()) ?? '', /Hello Bob, are you there\?/)

    // Replies appear live in the other browser's open conversation.
    await bob.page.getByRole('textbox', { name: 'Message' }).fill('Hi Alice! Yes, here.')
    await bob.page.keyboard.press('Enter')
    await alice.page.locator('.message:not(.mine)', { hasText: 'Hi Alice! Yes, here.' }).waitFor()
    await alice.page.getByRole('textbox', { name: 'Message' }).fill('Great, see you at noon.')
    await alice.page.keyboard.press('Enter')
    await bob.page.locator('.message:not(.mine)', { hasText: 'Great, see you at noon.' }).waitFor()
    // The line stays where it was while the chat is open, through replies and arrivals.
    assert.match((await afterLine.textContent()) ?? '', /Hello Bob, are you there\?/)
    assert.deepEqual(await shownMessages(alice.page), [
      'Hello Bob, are you there?',
      'Second message before you look',
      'Hi Alice! Yes, here.',
      'Great, see you at noon.',
    ])
    // Both have the conversation open, so nothing stays unread.
    assert.equal(await bob.page.locator('.unread-badge').count(), 0)
    assert.equal(await alice.page.locator('.unread-badge').count(), 0)
    await screenshot(alice.page, 'conversation')
    await screenshot(bob.page, 'conversation-peer')

    // A reload starts the list and the open chat's first page beside the session (start-up.ts),
    // each asked for once: the messenger and the conversation take them instead of asking again.
    const operations: string[] = []
    alice.page.on('request', (request) => {
      const operation = /\/msg\/v1\/(get_chats|get_chat_messages)\b/.exec(request.url())?.[1]
      if (operation) operations.push(operation)
    })
    await alice.page.reload()
    await alice.page.locator('.message', { hasText: 'Great, see you at noon.' }).waitFor()
    assert.equal(await alice.page.locator('.messages .message-content').count(), 4)
    assert.deepEqual(operations.sort(), ['get_chat_messages', 'get_chats'])

    // A message sent after Bob's list was read but before his stream is up still reaches him: the
    // stream starts from the tick the list was read up to, and the gateway replays the message.
    const releaseStream = await holdRequests(bob.page, `${system.url}/auth/v1/subscribe**`)
    await bob.page.goto(`${system.url}/chat/`)
    await bobsChat.locator('.chat-preview', { hasText: 'Great, see you at noon.' }).waitFor()
    await send(alice.page, 'Sent while your stream was connecting')
    releaseStream()
    await bobsChat.locator('.chat-preview', { hasText: 'Sent while your stream was connecting' }).waitFor()
    await bob.page.locator('.live-status').waitFor({ state: 'detached' })
    assert.match((await bobsChat.locator('.unread-badge').textContent()) ?? '', /^1\s*unread$/)

    // A reload of the open chat asks for its first page at once, beside the list. A message sent
    // after the page was read but before the list was shows in the conversation too: the list's
    // newer last message makes the conversation catch up (no live event of it is coming).
    await bobsChat.getByRole('link').click()
    await bob.page.getByRole('textbox', { name: 'Message' }).waitFor()
    const releaseList = await holdRequests(alice.page, `${system.url}/msg/v1/get_chats**`)
    const firstPage = alice.page.waitForResponse((response) => response.url().includes('/msg/v1/get_chat_messages'))
    await alice.page.reload()
    await firstPage
    await send(bob.page, 'Sent between your page and your list')
    releaseList()
    await alice.page.locator('.message', { hasText: 'Sent between your page and your list' }).waitFor()
    assert.deepEqual((await shownMessages(alice.page)).slice(-2), [
      'Sent while your stream was connecting',
      'Sent between your page and your list',
    ])

    // More unread than fit on the screen: the chat opens at the line, not at the newest message.
    await bob.page.goto(`${system.url}/chat/c/${chatId}`)
    await bob.page.locator('.message', { hasText: 'Sent between your page and your list' }).waitFor()
    assert.equal(await bob.page.locator('.unread-marker').count(), 0, 'nothing unread, no line')
    await bob.page.goto(`${system.url}/chat/`)
    await bobsChat.waitFor()
    for (let index = 1; index <= 30; index++) await send(alice.page, `Catch-up ${index}`)
    await bobsChat.locator('.unread-badge', { hasText: '30' }).waitFor()
    await bobsChat.getByRole('link').click()
    const line = bob.page.locator('.unread-marker')
    await line.waitFor()
    assert.equal((await afterLine.locator('.message-content').textContent())?.trim(), 'Catch-up 1')
    const { lineTop, boxTop, newestBelow } = await bob.page.evaluate(() => {
      const box = document.querySelector('.message-scroll')!.getBoundingClientRect()
      const newest = [...document.querySelectorAll('.messages .message')].at(-1)!.getBoundingClientRect()
      return {
        lineTop: document.querySelector('.unread-marker')!.getBoundingClientRect().top,
        boxTop: box.top,
        newestBelow: newest.top >= box.bottom,
      }
    })
    assert.ok(lineTop >= boxTop && lineTop - boxTop < 10, `the line at the top (${lineTop - boxTop} px)`)
    assert.ok(newestBelow, 'the newest message is further down')
    await screenshot(bob.page, 'conversation-new-messages')
    // Away from the newest message, a button goes back to it, and is gone there.
    await bob.page.getByRole('button', { name: 'Jump to newest ↓' }).click()
    await bob.page.getByRole('button', { name: 'Jump to newest ↓' }).waitFor({ state: 'detached' })
    const newestShown = await bob.page.evaluate(() => {
      const box = document.querySelector('.message-scroll')!.getBoundingClientRect()
      return [...document.querySelectorAll('.messages .message')].at(-1)!.getBoundingClientRect().bottom <= box.bottom
    })
    assert.ok(newestShown, 'the newest message in view')

    // Unsent text is the chat's draft: a reload keeps it, sending clears it, signing out forgets it.
    const field = bob.page.getByRole('textbox', { name: 'Message' })
    await field.fill('Half a thought')
    await bob.page.reload()
    await bob.page.locator('.message', { hasText: 'Catch-up 30' }).waitFor()
    assert.equal(await field.inputValue(), 'Half a thought')
    await field.press('Enter')
    await bob.page.locator('.message.mine', { hasText: 'Half a thought' }).waitFor()
    await bob.page.reload()
    await bob.page.locator('.message', { hasText: 'Half a thought' }).waitFor()
    assert.equal(await field.inputValue(), '')
    await field.fill('Never sent')
    const drafts = () =>
      bob.page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('atrium.draft.')))
    await until(async () => (await drafts()).length === 1, 'the draft kept')
    // With the chat no longer open, its row says there is a draft rather than the last message.
    await bob.page.goto(`${system.url}/chat/`)
    assert.equal((await bobsChat.locator('.chat-preview').textContent())?.trim(), 'Draft: Never sent')
    await bob.page.getByText('Profile', { exact: true }).click()
    await bob.page.getByRole('button', { name: 'Sign out' }).click()
    await bob.page.waitForURL(/\/chat\/sign-in/)
    assert.deepEqual(await drafts(), [])

    assert.deepEqual(alice.errors, [])
    assert.deepEqual(bob.errors, [])
  },
)

test('a notification link to the peer leads through the magic link into the conversation', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const system = await startSystem(t)
  const alice = await openPage(browser)
  await alice.page.goto(`${system.url}/chat/sign-in`)
  const aliceId = await signInByEmail(alice.page, system, 'alice@example.com')

  const bob = await openPage(browser, { width: 390, height: 780 })
  // Bob signs in once so he has an id, then signs out again.
  await bob.page.goto(`${system.url}/chat/`)
  const bobId = await signInByEmail(bob.page, system, 'bob@example.com')
  await bob.page.getByText('Profile', { exact: true }).click()
  await bob.page.getByRole('button', { name: 'Sign out' }).click()
  await bob.page.waitForURL(`${system.url}/chat/sign-in`)

  await alice.page.getByText('New private chat').click()
  await choosePerson(alice.page, 'Find a person', bobId)
  await alice.page.getByRole('textbox', { name: 'Message' }).fill('Ping from a notification')
  await alice.page.keyboard.press('Enter')
  await alice.page.locator('.message.mine', { hasText: 'Ping from a notification' }).waitFor()

  // A private-chat notification opens /chat/c/{peerCrmId}: signed out, Bob signs in by the mailed link.
  await bob.page.goto(`${system.url}/chat/c/${aliceId}`)
  await bob.page.waitForURL(`${system.url}/chat/sign-in?next=${encodeURIComponent(`/chat/c/${aliceId}`)}`)
  const before = (await system.mailTo('bob@example.com')).count
  await bob.page.getByLabel('Email address').fill('bob@example.com')
  await bob.page.getByRole('button', { name: 'Send code' }).click()
  await bob.page.getByLabel('Sign-in code').waitFor()
  const { link } = await system.mailTo('bob@example.com', before)
  await bob.page.goto(link)
  await bob.page.waitForURL(`${system.url}/chat/c/${aliceId}`)
  await bob.page.locator('.message', { hasText: 'Ping from a notification' }).waitFor()
  // On a phone-sized screen the open conversation takes the screen, with a way back to the list.
  assert.equal(await bob.page.locator('.sidebar').isVisible(), false)
  await screenshot(bob.page, 'conversation-phone')
  await bob.page.getByRole('link', { name: 'Back to the chat list' }).click()
  await bob.page.locator('.sidebar').waitFor()

  assert.deepEqual(alice.errors, [])
  assert.deepEqual(bob.errors, [])
})

test('the call history asks to sign in first, a bad invite says so, and unknown paths are not found', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const system = await startSystem(t)
  const { page, errors } = await openPage(browser)
  await page.goto(`${system.url}/chat/calls`)
  await page.waitForURL(`${system.url}/chat/sign-in?next=${encodeURIComponent('/chat/calls')}`)
  await page.goto(`${system.url}/chat?code=invite-code-1`)
  await page.getByRole('heading', { name: 'Could not join' }).waitFor()
  await page.goto(`${system.url}/chat/no/such/page`)
  await page.getByRole('heading', { name: 'Page not found' }).waitFor()
  await page.getByRole('link', { name: 'Back to the messenger' }).click()
  await page.waitForURL(`${system.url}/chat/sign-in`)
  assert.deepEqual(errors, [])
})
