import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Page } from 'playwright-core'
import { checkAccessibility } from './accessibility.ts'
import { openPrivateChat, send } from './steps.ts'
import { launchBrowser, openPage, signInByEmail, startSystem } from './system.ts'

/** One message of the open conversation by id. */
const messageOf = (page: Page, id: string) => page.locator(`.messages [data-message-id="${id}"]`)

/** Opens a message's actions and presses one of them. */
async function act(page: Page, id: string, action: string) {
  await messageOf(page, id).getByRole('button', { name: 'Actions', exact: true }).click()
  await messageOf(page, id).getByRole('button', { name: action, exact: true }).click()
}

test('reply, react, edit, pin, delete, forward and search in an open conversation', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const system = await startSystem(t)
  const alice = await openPage(browser)
  // Bob uses a phone-sized screen.
  const bob = await openPage(browser, { width: 390, height: 780 })
  const carol = await openPage(browser)
  await alice.page.goto(`${system.url}/chat/sign-in`)
  await signInByEmail(alice.page, system, 'alice@example.com')
  await bob.page.goto(`${system.url}/chat/sign-in`)
  const bobId = await signInByEmail(bob.page, system, 'bob@example.com')
  await carol.page.goto(`${system.url}/chat/sign-in`)
  const carolId = await signInByEmail(carol.page, system, 'carol@example.com')
  // A stream starts at the events' head: wait until each page follows it, so none misses its new chat.
  for (const { page } of [alice, bob, carol]) await page.locator('.live-status').waitFor({ state: 'detached' })

  const carolChat = await openPrivateChat(alice.page, carolId)
  const bobChat = await openPrivateChat(alice.page, bobId)
  const release = await send(alice.page, 'Release **1.2** is on Friday, see [notes](/chat/)', 'Friday, see')
  const plain = await send(alice.page, 'A second message <img src=x onerror=alert(1)>')
  // The shared renderer runs in the browser: Markdown becomes markup, raw HTML stays text.
  await messageOf(alice.page, release).locator('.message-content strong', { hasText: '1.2' }).waitFor()
  assert.equal(await messageOf(alice.page, release).locator('a').getAttribute('href'), '/chat/')
  await messageOf(alice.page, plain).locator('.message-content.markdown').waitFor()
  assert.equal(await messageOf(alice.page, plain).locator('img').count(), 0)
  assert.match((await messageOf(alice.page, plain).textContent()) ?? '', /<img src=x onerror=alert\(1\)>/)

  await bob.page.locator(`[data-chat-id="${bobChat}"] a`).click()
  await messageOf(bob.page, plain).waitFor()

  let reply = ''
  await t.test('a reply quotes its message in the composer and shows the preview to the other person', async () => {
    // By keyboard: the actions open from their button, Escape closes them and gives the focus back.
    const toggle = messageOf(bob.page, release).getByRole('button', { name: 'Actions', exact: true })
    await toggle.focus()
    await bob.page.keyboard.press('Enter')
    await messageOf(bob.page, release).getByRole('button', { name: 'Reply', exact: true }).waitFor()
    await bob.page.keyboard.press('Escape')
    assert.equal(await toggle.evaluate((element) => element === document.activeElement), true)
    await bob.page.keyboard.press('Enter')
    await messageOf(bob.page, release).getByRole('button', { name: 'Reply', exact: true }).press('Enter')
    assert.match(
      (await bob.page.locator('.composer .quoted').textContent()) ?? '',
      /Replying to[\s\S]*Release 1\.2 is on Friday/,
    )
    reply = await send(bob.page, 'Ship it.')
    await messageOf(alice.page, reply).locator('.reply-preview', { hasText: 'Release 1.2 is on Friday' }).waitFor()
    await checkAccessibility(bob.page, 'conversation-reply-phone')
  })

  await t.test('a reaction shows as a chip to both, and the chip toggles the own reaction', async () => {
    await act(alice.page, reply, 'React with 👍')
    await messageOf(bob.page, reply).locator('.reaction-chip', { hasText: '👍 1' }).waitFor()
    await messageOf(bob.page, reply).locator('.reaction-chip').click()
    await messageOf(alice.page, reply).locator('.reaction-chip[aria-pressed="true"]', { hasText: '👍 2' }).waitFor()
    await messageOf(alice.page, reply).locator('.reaction-chip').click()
    await messageOf(bob.page, reply).locator('.reaction-chip[aria-pressed="true"]', { hasText: '👍 1' }).waitFor()
  })

  await t.test('more reactions: an emoji found by name, or chosen with the arrow keys', async () => {
    await act(alice.page, reply, 'More reactions')
    const picker = alice.page.getByRole('dialog', { name: 'Add a reaction' })
    await picker.locator('.emoji-grid button').first().waitFor()
    await checkAccessibility(alice.page, 'emoji-picker')
    await picker.getByRole('searchbox', { name: 'Find an emoji' }).fill('coff')
    assert.deepEqual(await picker.locator('.emoji-grid button').allTextContents(), ['☕'])
    await alice.page.keyboard.press('Enter')
    await messageOf(bob.page, reply).locator('.reaction-chip', { hasText: '☕ 1' }).waitFor()
    await picker.waitFor({ state: 'detached' })

    // Bob, by keyboard: into the grid, two to the right, one row down; the button there is named.
    await act(bob.page, reply, 'More reactions')
    await bob.page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Find an emoji')
    await bob.page.keyboard.press('ArrowDown')
    for (const key of ['ArrowRight', 'ArrowRight', 'ArrowDown']) await bob.page.keyboard.press(key)
    const chosen = await bob.page.evaluate(() => [
      document.activeElement?.textContent,
      document.activeElement?.getAttribute('aria-label'),
    ])
    const all = await bob.page.locator('.emoji-grid button').allTextContents()
    assert.equal(chosen[0], all[2 + 8], 'the third emoji of the second row')
    assert.ok(chosen[1] && chosen[1].length > 2, `named: ${chosen[1]}`)
    await bob.page.keyboard.press('Enter')
    await messageOf(alice.page, reply)
      .locator('.reaction-chip', { hasText: `${chosen[0]} 1` })
      .waitFor()
    // Escape leaves the picker and the actions keep the message's other choices.
    await act(bob.page, reply, 'More reactions')
    await bob.page.keyboard.press('Escape')
    await messageOf(bob.page, reply).getByRole('button', { name: 'Reply', exact: true }).waitFor()
  })

  await t.test('an edit changes the message and the preview of its reply', async () => {
    await act(alice.page, release, 'Edit')
    const field = alice.page.getByRole('textbox', { name: 'Message' })
    // The composer takes the message's source text.
    await alice.page.waitForFunction(
      (text) => (document.getElementById('composer-text') as HTMLTextAreaElement | null)?.value === text,
      'Release **1.2** is on Friday, see [notes](/chat/)',
    )
    await field.fill('Release **1.2** is on Monday')
    await alice.page.getByRole('button', { name: 'Save' }).click()
    await messageOf(bob.page, release).locator('.message-content', { hasText: 'Release 1.2 is on Monday' }).waitFor()
    await messageOf(bob.page, release).locator('.edited').waitFor()
    await messageOf(bob.page, reply).locator('.reply-preview', { hasText: 'Release 1.2 is on Monday' }).waitFor()
    await alice.page.getByRole('button', { name: 'Send' }).waitFor()
    assert.equal(await field.inputValue(), '')
  })

  await t.test('the up arrow in an empty composer edits the newest message of one’s own', async () => {
    const field = alice.page.getByRole('textbox', { name: 'Message' })
    await field.focus()
    await alice.page.keyboard.press('ArrowUp')
    await alice.page.getByRole('button', { name: 'Save' }).waitFor()
    assert.equal(await field.inputValue(), 'A second message <img src=x onerror=alert(1)>')
    await alice.page.keyboard.press('Escape')
    await alice.page.getByRole('button', { name: 'Send' }).waitFor()
    assert.equal(await field.inputValue(), '')
    // With text in the field, the arrow moves in the text.
    await field.fill('line one\nline two')
    await alice.page.keyboard.press('ArrowUp')
    assert.equal(await alice.page.getByRole('button', { name: 'Save' }).count(), 0)
    await field.fill('')
  })

  await t.test('a pinned message shows in the bar for both until it is unpinned', async () => {
    await act(bob.page, release, 'Pin')
    await alice.page.locator('.pinned-bar', { hasText: 'Release 1.2 is on Monday' }).waitFor()
    await messageOf(alice.page, release).locator('.pin-mark').waitFor()
    await checkAccessibility(alice.page, 'conversation-actions')
    await act(alice.page, release, 'Unpin')
    await bob.page.locator('.pinned-bar').waitFor({ state: 'detached' })
  })

  await t.test('a deleted message leaves both views', async () => {
    await messageOf(alice.page, plain).getByRole('button', { name: 'Actions', exact: true }).click()
    await messageOf(alice.page, plain).getByRole('button', { name: 'Delete', exact: true }).click()
    await messageOf(alice.page, plain).getByText('Delete this message for everyone?').waitFor()
    await messageOf(alice.page, plain).getByRole('button', { name: 'Delete', exact: true }).click()
    await messageOf(bob.page, plain).waitFor({ state: 'detached' })
    await messageOf(alice.page, plain).waitFor({ state: 'detached' })
    // After a reload it stays gone: the live view and the server's history agree.
    await bob.page.reload()
    await bob.page.getByRole('textbox', { name: 'Message' }).waitFor()
    await messageOf(bob.page, reply).waitFor()
    assert.equal(await messageOf(bob.page, plain).count(), 0)
  })

  await t.test('a message is forwarded into another chat, where it arrives live', async () => {
    await act(alice.page, reply, 'Forward')
    const dialog = alice.page.getByRole('dialog', { name: 'Forward message' })
    // Carol chose no display name: her chat is named "User" and her id's last four digits (docs/people.md).
    await dialog.getByRole('button', { name: `User ${carolId.slice(-4)}` }).click()
    await alice.page.getByRole('status').filter({ hasText: 'Forwarded to' }).waitFor()
    await carol.page.locator(`[data-chat-id="${carolChat}"] a`).click()
    await carol.page.locator('.message', { hasText: 'Ship it.' }).locator('.forwarded').waitFor()
  })

  await t.test('search finds messages by a partial word, and a result opens its chat at the message', async () => {
    await carol.page.getByRole('button', { name: 'Search', exact: true }).click()
    await carol.page.getByRole('searchbox', { name: 'Search messages' }).fill('hip')
    await carol.page.keyboard.press('Enter')
    await carol.page.locator('.search-result', { hasText: 'Ship it.' }).waitFor()

    await alice.page.goto(`${system.url}/chat/c/${carolChat}`)
    await alice.page.getByRole('button', { name: 'Search', exact: true }).click()
    await alice.page.getByLabel('All chats').check()
    await alice.page.getByRole('searchbox', { name: 'Search messages' }).fill('onda')
    await alice.page.keyboard.press('Enter')
    const result = alice.page.locator('.search-result', { hasText: 'Release **1.2** is on Monday' })
    await result.waitFor()
    await checkAccessibility(alice.page, 'conversation-search')
    await result.click()
    await alice.page.waitForURL(new RegExp(`/chat/c/${bobChat}(#.*)?$`))
    await alice.page.waitForFunction((id) => document.activeElement?.getAttribute('data-message-id') === id, release)
  })

  await t.test('a copied message link opens the chat at the message, also after signing in', async () => {
    const focused = (page: Page, id: string) =>
      page.waitForFunction((wanted) => document.activeElement?.getAttribute('data-message-id') === wanted, id)
    await alice.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: system.url })
    await alice.page.goto(`${system.url}/chat/c/${bobChat}`)
    await act(alice.page, release, 'Copy link')
    await alice.page.getByRole('status').filter({ hasText: 'Link to the message copied.' }).waitFor()
    const link = await alice.page.evaluate(() => navigator.clipboard.readText())
    assert.equal(link, `${system.url}/chat/c/${bobChat}#message-${release}`)

    // Bob opens it from elsewhere in the messenger …
    await bob.page.goto(`${system.url}/chat/`)
    await bob.page.goto(link)
    await focused(bob.page, release)
    // … pastes another message's link into the address bar of the open chat …
    await bob.page.evaluate((hash) => {
      location.hash = hash
    }, `#message-${reply}`)
    await focused(bob.page, reply)
    // … and opens it signed out, in another browser: after signing in he is at the message.
    const elsewhere = await openPage(browser)
    await elsewhere.page.goto(link)
    assert.equal(await signInByEmail(elsewhere.page, system, 'bob@example.com'), bobId)
    await focused(elsewhere.page, release)
    assert.deepEqual(elsewhere.errors, [])
  })

  await t.test('an emoji from the composer’s picker goes in where the caret was', async () => {
    const field = alice.page.getByRole('textbox', { name: 'Message' })
    await field.fill('Hi there')
    await field.press('Home')
    for (let step = 0; step < 2; step++) await field.press('ArrowRight')
    await alice.page.getByRole('button', { name: 'Insert emoji' }).click()
    const picker = alice.page.getByRole('dialog', { name: 'Insert an emoji' })
    await picker.locator('.emoji-grid button').first().waitFor()
    // The reaction Alice picked by name above is the row of the recently used ones.
    const recent = picker.getByRole('group', { name: 'Recently used' }).getByRole('button')
    assert.deepEqual(await recent.allTextContents(), ['☕'])
    await checkAccessibility(alice.page, 'composer-emoji')
    await picker.getByRole('searchbox', { name: 'Find an emoji' }).fill('wave')
    await alice.page.keyboard.press('Enter')
    await picker.waitFor({ state: 'detached' })
    // The focus is back in the field, right after the emoji: the next key follows it.
    await alice.page.keyboard.type('!')
    assert.equal(await field.inputValue(), 'Hi👋! there')
    await alice.page.keyboard.press('Enter')
    await bob.page.locator('.message', { hasText: 'Hi👋! there' }).waitFor()
    // Escape closes the picker without touching the text or a reply in progress.
    await field.fill('unchanged')
    await alice.page.getByRole('button', { name: 'Insert emoji' }).click()
    await picker.getByRole('searchbox', { name: 'Find an emoji' }).waitFor()
    // The newest first; the down arrow goes into that row, and from there to the same column of
    // all the emoji below it.
    assert.deepEqual(await recent.allTextContents(), ['👋', '☕'])
    const focused = () => alice.page.evaluate(() => document.activeElement?.textContent)
    await alice.page.keyboard.press('ArrowDown')
    assert.equal(await focused(), '👋')
    await alice.page.keyboard.press('ArrowRight')
    await alice.page.keyboard.press('ArrowDown')
    const everyEmoji = await picker.getByRole('group', { name: 'All emoji' }).getByRole('button').allTextContents()
    assert.equal(await focused(), everyEmoji[1])
    await alice.page.keyboard.press('Escape')
    await picker.waitFor({ state: 'detached' })
    assert.equal(await field.inputValue(), 'unchanged')
    await field.fill('')
  })

  assert.deepEqual(alice.errors, [])
  assert.deepEqual(bob.errors, [])
  assert.deepEqual(carol.errors, [])
})
