import assert from 'node:assert/strict'
import { test } from 'node:test'
import { signedHeaders } from '@atrium/platform'
import type { Page } from 'playwright-core'
import { SERVICE_SECRET } from '../../../gateway/test/support.ts'
import { createGroup, send } from './steps.ts'
import { choosePerson, launchBrowser, openPage, screenshot, signInByEmail, startSystem } from './system.ts'

/** The id in the path of a messenger URL (/chat/c/{id}). */
const chatIdOf = (page: Page) => new URL(page.url()).pathname.split('/').at(-1)!

/** Offline emulation breaks the page's requests and its SSE stream; the browser logs each failure. */
const notOfflineNoise = (errors: string[]) => errors.filter((error) => !error.includes('ERR_INTERNET_DISCONNECTED'))

test('offline catch-up, groups with members, and guests through an invite link', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const system = await startSystem(t)
  const alice = await openPage(browser)
  const bob = await openPage(browser)
  await alice.page.goto(`${system.url}/chat/sign-in`)
  await screenshot(alice.page, 'sign-in')
  const aliceId = await signInByEmail(alice.page, system, 'alice@example.com')
  await bob.page.goto(`${system.url}/chat/sign-in`)
  const bobId = await signInByEmail(bob.page, system, 'bob@example.com')

  await t.test('a browser that was offline sees the messages it missed, without a reload', async () => {
    await alice.page.getByText('New private chat').click()
    await choosePerson(alice.page, 'Find a person', bobId)
    await alice.page.waitForURL(/\/chat\/c\/\d+$/)
    const chatId = chatIdOf(alice.page)
    await send(alice.page, 'Before the break')
    await bob.page.locator(`[data-chat-id="${chatId}"] a`).click()
    await bob.page.locator('.message', { hasText: 'Before the break' }).waitFor()
    await bob.page.evaluate(() => Object.assign(window, { samePage: true }))

    await bob.context.setOffline(true)
    await bob.page.getByRole('status').filter({ hasText: 'Offline' }).waitFor()
    await send(alice.page, 'Missed while offline')
    await send(alice.page, 'Also missed')
    await bob.context.setOffline(false)

    await bob.page.locator('.message', { hasText: 'Also missed' }).waitFor()
    assert.deepEqual(await bob.page.locator('.messages .message-content').allInnerTexts(), [
      'Before the break',
      'Missed while offline',
      'Also missed',
    ])
    assert.equal(await bob.page.evaluate(() => (window as { samePage?: boolean }).samePage), true, 'no reload')
    await screenshot(bob.page, 'conversation')
  })

  await t.test('the owner creates a group, adds a member and sees the member count', async () => {
    await createGroup(alice.page, 'Release crew')
    await alice.page.getByRole('button', { name: 'Chat info' }).click()
    const count = alice.page.getByTestId('member-count')
    await count.filter({ hasText: /^1$/ }).waitFor()
    await choosePerson(alice.page, 'Add a member', bobId)
    await count.filter({ hasText: /^2$/ }).waitFor()
    const bobRow = alice.page.locator(`.member-list [data-member-id="${bobId}"]`)
    assert.equal(await bobRow.locator('.role').textContent(), 'Member')
    assert.equal(await alice.page.locator('.member-list .role-owner').count(), 1)
    await alice.page.getByText('Group · 2 members').first().waitFor()
    await screenshot(alice.page, 'members-panel')
    // Bob's list gets the group live.
    await bob.page.locator('.chat-list .chat-name', { hasText: 'Release crew' }).waitFor()
    await screenshot(bob.page, 'chat-list')

    // Keyboard: Escape closes the panel and gives focus back to its button; Enter opens it again.
    await alice.page.getByRole('heading', { name: 'Chat info' }).waitFor()
    await alice.page.keyboard.press('Escape')
    await alice.page.locator('#chat-panel').waitFor({ state: 'detached' })
    assert.equal(await alice.page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Chat info')
    await alice.page.keyboard.press('Enter')
    await alice.page.locator('#chat-panel').waitFor()
  })

  await t.test('a guest joins twice from one device into the same conversation, and the owner reads it', async () => {
    await alice.page.getByRole('button', { name: 'Create a guest invite link' }).click()
    const link = await alice.page.getByLabel('Invite link').inputValue()
    assert.match(link, /\/chat\?code=[A-Za-z0-9]{16}$/)

    const guest = await openPage(browser, { width: 375, height: 740 })
    await guest.page.goto(link)
    await guest.page.getByRole('heading', { name: 'Release crew' }).waitFor()
    const conversation = guest.page.locator('article.conversation')
    const firstChat = await conversation.getAttribute('data-chat-id')
    await send(guest.page, 'Hello from a guest')
    // No upload, file browser or search for guests.
    assert.equal(await guest.page.locator('input[type=file], [role=search], a[href*="/files/"]').count(), 0)
    await screenshot(guest.page, 'guest-view')

    // The guest's SSE stream opens with the invite code and this device, never a session (docs/events.md).
    const streamOpened = guest.page.waitForResponse(
      (response) => response.url().includes('/auth/v1/subscribe?code=') && response.status() === 200,
    )
    await guest.page.goto(link)
    await guest.page.locator('.message.mine', { hasText: 'Hello from a guest' }).waitFor()
    assert.equal(await conversation.getAttribute('data-chat-id'), firstChat)
    assert.equal(chatIdOf(alice.page), firstChat)
    await streamOpened

    await alice.page.locator('.message:not(.mine)', { hasText: 'Hello from a guest' }).waitFor()
    await alice.page.getByTestId('member-count').filter({ hasText: /^3$/ }).waitFor()

    // Live both ways: the owner's answer reaches the guest over the stream, and once it is shown the
    // page asks for nothing more while nothing happens (it used to poll every 4 s).
    await send(alice.page, 'Welcome, guest')
    await guest.page.locator('.message:not(.mine)', { hasText: 'Welcome, guest' }).waitFor()
    const polls: string[] = []
    guest.page.on('request', (request) => {
      if (/\/msg\/v1\/(get_chat_messages|call\/events)/.test(request.url())) polls.push(request.url())
    })
    await guest.page.waitForTimeout(9000)
    assert.deepEqual(polls, [], 'a live guest page does not poll')
    await send(guest.page, 'Got it')
    await alice.page.locator('.message:not(.mine)', { hasText: 'Got it' }).waitFor()
    assert.deepEqual(guest.errors, [])

    // A guest whose stream cannot open (a proxy that drops it) falls back to polling, with back-off.
    const blocked = await openPage(browser, { width: 375, height: 740 })
    await blocked.page.route('**/auth/v1/subscribe?**', (route) => route.abort())
    const fallbackPolls: number[] = []
    blocked.page.on('request', (request) => {
      if (request.url().includes('/msg/v1/get_chat_messages')) fallbackPolls.push(Date.now())
    })
    await blocked.page.goto(link)
    await blocked.page.getByRole('heading', { name: 'Release crew' }).waitFor()
    await blocked.page.locator('.message', { hasText: 'Got it' }).waitFor()
    const loaded = fallbackPolls.length
    await send(alice.page, 'Polled, not streamed')
    await blocked.page.locator('.message', { hasText: 'Polled, not streamed' }).waitFor({ timeout: 15_000 })
    assert.ok(fallbackPolls.length > loaded, 'the message came by a poll')

    // Revoked, the invite ends the guest's stream; the page's fallback poll learns why and stops.
    const code = new URL(link).searchParams.get('code')!
    const revoke = '/msg/v1/revoke_invite'
    const headers = signedHeaders(SERVICE_SECRET, 'POST', revoke, {
      'x-crm': aliceId,
      'content-type': 'application/json',
    })
    const revoked = await fetch(`${system.chat.base}${revoke}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ code }),
    })
    assert.equal(revoked.status, 200, 'Alice revokes the invite (as the gateway would pass her request on)')
    await guest.page.getByRole('alert').filter({ hasText: 'This invite link is no longer valid' }).waitFor()
    // Its next poll may be 16 s away (back-off doubles from 4 s).
    await blocked.page
      .getByRole('alert')
      .filter({ hasText: 'This invite link is no longer valid' })
      .waitFor({ timeout: 40_000 })
  })

  await t.test('on a phone-sized screen the chat info covers the conversation and Escape closes it', async () => {
    await alice.page.setViewportSize({ width: 375, height: 740 })
    const panel = alice.page.locator('#chat-panel')
    assert.deepEqual(await panel.boundingBox(), { x: 0, y: 0, width: 375, height: 740 })
    await screenshot(alice.page, 'members-panel-phone')
    await alice.page.getByRole('button', { name: 'Close chat info' }).focus()
    await alice.page.keyboard.press('Escape')
    await panel.waitFor({ state: 'detached' })
    await alice.page.getByRole('link', { name: 'Back to the chat list' }).click()
    await alice.page.locator('.sidebar').waitFor()
  })

  assert.deepEqual(alice.errors, [])
  assert.deepEqual(notOfflineNoise(bob.errors), [])
})
