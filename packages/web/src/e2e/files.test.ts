import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { formatProgress } from '../files/file-size.ts'
import { checkAccessibility } from './accessibility.ts'
import {
  attachByButton,
  downloadedBytes,
  dropFile,
  pasteFile,
  pngFile,
  randomFile,
  waitUploaded,
  withoutBrokenRequests,
} from './file-helpers.ts'
import { choosePerson, launchBrowser, openPage, signInByEmail, startSystem } from './system.ts'

/** The upload chunk size of the resume tests' client. */
const CHUNK = 256 * 1024

/** The id in the path of a messenger URL (/chat/c/{id}). */
const chatIdOf = (page: Page) => new URL(page.url()).pathname.split('/').at(-1)!

/** The Download link of the file card named `name` in the open conversation. */
const downloadLink = (page: Page, name: string) => page.getByRole('link', { name: `Download ${name}` }).last()

/** Alice and Bob signed in on their own pages of one system, with their private chat open on both. */
async function twoMembers(t: TestContext, browser: Browser, clientConfig?: Record<string, unknown>) {
  const system = await startSystem(t, 'sqlite', { Files: { DeniedContentTypes: ['text/html'] } }, clientConfig)
  const alice = await openPage(browser)
  const bob = await openPage(browser)
  await alice.page.goto(`${system.url}/chat/sign-in`)
  await signInByEmail(alice.page, system, 'alice@example.com')
  await bob.page.goto(`${system.url}/chat/sign-in`)
  const bobId = await signInByEmail(bob.page, system, 'bob@example.com')
  await alice.page.getByText('New private chat').click()
  await choosePerson(alice.page, 'Find a person', bobId)
  await alice.page.waitForURL(/\/chat\/c\/\d+$/)
  const chatId = chatIdOf(alice.page)
  await bob.page.locator(`[data-chat-id="${chatId}"] a`).click()
  await bob.page.getByRole('textbox', { name: 'Message' }).waitFor()
  return { alice, bob, chatId }
}

test('files: attach by button, drop and paste, download, preview and browse; a guest downloads but never attaches', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const { alice, bob, chatId } = await twoMembers(t, browser)
  const report = randomFile('report – Q3.bin', 300_000)
  const photo = pngFile('holiday.png')

  await t.test('attached by the button, a file and an image reach the other member exactly', async () => {
    await attachByButton(alice.page, [report, photo])
    const tray = alice.page.getByRole('list', { name: 'Attachments' })
    await tray.getByText('report – Q3.bin').waitFor()
    await waitUploaded(alice.page, 2)
    assert.match((await tray.textContent()) ?? '', /293 KB · ready to send/)
    await checkAccessibility(alice.page, 'files-tray')
    await alice.page.getByRole('textbox', { name: 'Message' }).fill('Numbers and a photo')
    await alice.page.keyboard.press('Enter')
    await alice.page.locator('.message.mine .file-thumbnail img[alt="holiday.png"]').waitFor()
    assert.equal(await tray.count(), 0, 'the tray is empty after sending')

    const card = bob.page.locator('.message:not(.mine) .file-card', { hasText: 'report – Q3.bin' })
    await card.waitFor()
    assert.match((await card.textContent()) ?? '', /293 KB/)
    await bob.page.locator('.message:not(.mine)', { hasText: 'Numbers and a photo' }).waitFor()
    const received = await downloadedBytes(bob.page, () => downloadLink(bob.page, report.name).click())
    assert.ok(received.equals(report.buffer), 'the downloaded bytes are the uploaded ones')

    const thumbnail = bob.page.locator('.file-thumbnail img[alt="holiday.png"]')
    await thumbnail.waitFor()
    await bob.page.waitForFunction(() => {
      const image = document.querySelector<HTMLImageElement>('.file-thumbnail img[alt="holiday.png"]')
      return image?.complete && image.naturalWidth === 64
    })
    const imageBytes = await bob.page.evaluate(
      async (src) => {
        return Array.from(new Uint8Array(await (await fetch(src)).arrayBuffer()))
      },
      (await thumbnail.getAttribute('src'))!,
    )
    assert.ok(Buffer.from(imageBytes).equals(photo.buffer))
    await checkAccessibility(bob.page, 'files-in-conversation')
  })

  await t.test('the image preview opens from the thumbnail, offers a download and closes with Escape', async () => {
    const opener = bob.page.getByRole('button', { name: /Open image holiday\.png/ })
    await opener.click()
    const preview = bob.page.getByRole('dialog', { name: 'Image holiday.png' })
    await preview.waitFor()
    await checkAccessibility(bob.page, 'files-preview')
    const saved = await downloadedBytes(bob.page, () => preview.getByRole('link', { name: 'Download' }).click())
    assert.ok(saved.equals(photo.buffer))
    await bob.page.keyboard.press('Escape')
    await preview.waitFor({ state: 'detached' })
    assert.match((await bob.page.evaluate(() => document.activeElement?.getAttribute('aria-label'))) ?? '', /holiday/)
  })

  await t.test('a dropped file and a pasted image are attached and sent', async () => {
    const dropped = randomFile('dropped.bin', 70_000)
    await dropFile(alice.page, dropped)
    await waitUploaded(alice.page, 1)
    await alice.page.getByRole('button', { name: 'Send', exact: true }).click()
    await bob.page.locator('.file-card', { hasText: 'dropped.bin' }).waitFor()
    assert.ok(
      (await downloadedBytes(bob.page, () => downloadLink(bob.page, 'dropped.bin').click())).equals(dropped.buffer),
    )

    const pasted = pngFile('pasted.png', 20, 20)
    await pasteFile(alice.page, pasted)
    await waitUploaded(alice.page, 1)
    await alice.page.getByRole('button', { name: 'Send', exact: true }).click()
    await bob.page.locator('.file-thumbnail img[alt="pasted.png"]').waitFor()
  })

  await t.test('the file browser lists the chat’s files newest first and pages back', async () => {
    // Two files per page, so the chat's four files take two pages.
    await alice.page.route('**/msg/v1/get_chat_files?**', (route) =>
      route.continue({
        url: route
          .request()
          .url()
          .replace(/limit=\d+/, 'limit=2'),
      }),
    )
    await alice.page.getByRole('button', { name: 'Chat info' }).click()
    await alice.page.getByRole('link', { name: 'Files in this chat' }).click()
    await alice.page.waitForURL(`**/chat/files/${chatId}`)
    const rows = alice.page.locator('.file-row .file-name')
    await rows.first().waitFor()
    assert.deepEqual(await rows.allInnerTexts(), ['pasted.png', 'dropped.bin'])
    await alice.page.getByRole('button', { name: 'Load older files' }).click()
    await alice.page.locator('.file-row', { hasText: 'report – Q3.bin' }).waitFor()
    assert.deepEqual(await rows.allInnerTexts(), ['pasted.png', 'dropped.bin', 'holiday.png', 'report – Q3.bin'])
    assert.equal(await alice.page.getByRole('button', { name: 'Load older files' }).count(), 0)
    const dropped = (await alice.page.locator('.file-row', { hasText: 'dropped.bin' }).textContent()) ?? ''
    assert.match(dropped, /68 KB · You ·/)
    assert.match(
      (await alice.page.locator('.file-row', { hasText: 'report – Q3.bin' }).textContent()) ?? '',
      /Numbers and a photo/,
      'the caption is listed with its file',
    )
    await checkAccessibility(alice.page, 'files-browser')
    await alice.page.setViewportSize({ width: 375, height: 740 })
    await checkAccessibility(alice.page, 'files-browser-phone')
    await alice.page.setViewportSize({ width: 1100, height: 760 })
    await alice.page.unrouteAll()
    await alice.page.getByRole('link', { name: 'Back to the chat' }).click()
    await alice.page.waitForURL(`**/chat/c/${chatId}`)
  })

  await t.test('a guest downloads a file but has no attach button and no file browser', async () => {
    await alice.page.getByText('Invite a guest').click()
    await alice.page.getByRole('button', { name: 'Create an invite link' }).click()
    const link = await alice.page.getByLabel('Invite link').inputValue()
    const guest = await openPage(browser, { width: 375, height: 740 })
    await guest.page.goto(link)
    await guest.page.getByRole('textbox', { name: 'Message' }).waitFor()
    // Alice opens the guest's chat by its id once it reaches her list (live, so it may come late).
    const guestChat = await guest.page.locator('article.conversation').getAttribute('data-chat-id')
    await alice.page.locator(`.chat-list li[data-chat-id="${guestChat}"] .chat-link`).click()
    await alice.page.waitForURL(`**/chat/c/${guestChat}`)
    await alice.page.getByRole('textbox', { name: 'Message' }).waitFor()
    const note = randomFile('for-the-guest.txt', 5_000, 'text/plain')
    await attachByButton(alice.page, [note])
    await waitUploaded(alice.page, 1)
    await alice.page.getByRole('button', { name: 'Send', exact: true }).click()
    await guest.page.locator('.file-card', { hasText: 'for-the-guest.txt' }).waitFor({ timeout: 15_000 })
    const received = await downloadedBytes(guest.page, () =>
      guest.page.getByRole('button', { name: 'Download for-the-guest.txt' }).click(),
    )
    assert.ok(received.equals(note.buffer))
    assert.equal(
      await guest.page.locator('input[type=file], button[aria-label="Attach files"], a[href*="/chat/files/"]').count(),
      0,
    )
    await checkAccessibility(guest.page, 'files-guest')
    assert.deepEqual(guest.errors, [])
  })

  assert.deepEqual(alice.errors, [])
  assert.deepEqual(bob.errors, [])
})

test('files: an upload interrupted, offline or reloaded resumes; cancel ends it; a refusal says why', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  // Small chunks (client config files.chunkSize), so that files of a few chunks stay small and
  // quick on a loaded machine.
  const { alice, bob } = await twoMembers(t, browser, { files: { chunkSize: CHUNK } })
  let cancelledUpload = ''

  await t.test('an upload interrupted mid-way resumes from where it stopped and arrives exactly', async () => {
    const big = randomFile('big.bin', Math.floor(2.1 * CHUNK))
    let creations = 0
    let patches = 0
    await alice.page.route('**/auth/v1/uploads**', (route) => {
      const method = route.request().method()
      if (method === 'POST') creations += 1
      if (method === 'PATCH' && ++patches > 1) return route.abort('connectionreset')
      return route.continue()
    })
    await attachByButton(alice.page, [big])
    const resume = alice.page.getByRole('button', { name: 'Resume big.bin' })
    await resume.waitFor({ timeout: 30_000 })
    const row = alice.page.locator('.attachment', { hasText: 'big.bin' })
    const sent = `${formatProgress(CHUNK, big.buffer.length)} sent.`
    assert.ok(((await row.textContent()) ?? '').includes(`The connection was interrupted. ${sent}`))
    assert.equal(await alice.page.getByRole('button', { name: 'Send', exact: true }).isDisabled(), true)
    await checkAccessibility(alice.page, 'files-interrupted')

    await alice.page.unrouteAll()
    await resume.click()
    await waitUploaded(alice.page, 1)
    assert.equal(creations, 1, 'resumed on the same upload, not started again')
    await alice.page.getByRole('button', { name: 'Send', exact: true }).click()
    await bob.page.locator('.file-card', { hasText: 'big.bin' }).waitFor()
    assert.ok((await downloadedBytes(bob.page, () => downloadLink(bob.page, 'big.bin').click())).equals(big.buffer))
  })

  await t.test('going offline pauses an upload, which goes on by itself when back online', async () => {
    const file = randomFile('offline.bin', Math.floor(1.2 * CHUNK))
    let patches = 0
    await alice.page.route('**/auth/v1/uploads/**', async (route) => {
      if (route.request().method() === 'PATCH' && ++patches === 2) await alice.context.setOffline(true)
      return route.continue().catch(() => {})
    })
    await attachByButton(alice.page, [file])
    await alice.page.locator('.attachment-paused', { hasText: 'offline.bin' }).waitFor({ timeout: 30_000 })
    await alice.page.unrouteAll()
    await alice.context.setOffline(false)
    await waitUploaded(alice.page, 1)
    await alice.page.getByRole('button', { name: 'Send', exact: true }).click()
    await bob.page.locator('.file-card', { hasText: 'offline.bin' }).waitFor()
    assert.ok(
      (await downloadedBytes(bob.page, () => downloadLink(bob.page, 'offline.bin').click())).equals(file.buffer),
    )
  })

  await t.test('after a reload, attaching the same file again resumes its upload', async () => {
    // A file on disk, so the browser gives it the same modification time (part of the fingerprint) twice.
    const file = randomFile('reloaded.bin', Math.floor(1.2 * CHUNK))
    const directory = await mkdtemp(join(tmpdir(), 'atrium-web-e2e-'))
    t.after(() => rm(directory, { recursive: true, force: true }))
    const path = join(directory, file.name)
    await writeFile(path, file.buffer)
    let patches = 0
    let broken: () => void = () => {}
    const brokenAgain = new Promise<void>((resolve) => {
      broken = resolve
    })
    await alice.page.route('**/auth/v1/uploads/**', (route) => {
      if (route.request().method() !== 'PATCH' || ++patches === 1) return route.continue()
      broken()
      return route.abort('connectionreset')
    })
    await attachByButton(alice.page, [path])
    await brokenAgain
    // Still broken while the page reloads, so no retry of the old page finishes the upload.
    await alice.page.reload()
    await alice.page.unrouteAll()

    const requests: string[] = []
    alice.page.on('request', (request) => {
      if (!request.url().includes('/auth/v1/uploads')) return
      requests.push(`${request.method()} ${request.headers()['upload-offset'] ?? ''}`.trim())
    })
    await attachByButton(alice.page, [path])
    await waitUploaded(alice.page, 1)
    assert.deepEqual(requests, ['HEAD', `PATCH ${CHUNK}`], 'no new upload, no byte twice')
    await alice.page.getByRole('button', { name: 'Send', exact: true }).click()
    await bob.page.locator('.file-card', { hasText: 'reloaded.bin' }).waitFor()
    assert.ok(
      (await downloadedBytes(bob.page, () => downloadLink(bob.page, 'reloaded.bin').click())).equals(file.buffer),
    )
  })

  await t.test('Cancel ends the upload on the gateway and removes it from the tray', async () => {
    await alice.page.route('**/auth/v1/uploads/**', (route) =>
      route.request().method() === 'PATCH' ? route.abort('connectionreset') : route.continue(),
    )
    const created = alice.page.waitForResponse(
      (response) => response.request().method() === 'POST' && response.url().includes('/uploads'),
    )
    await attachByButton(alice.page, [randomFile('unwanted.bin', Math.floor(1.2 * CHUNK))])
    const location = (await (await created).headerValue('location')) ?? ''
    const ended = alice.page.waitForResponse((response) => response.request().method() === 'DELETE')
    await alice.page.getByRole('button', { name: 'Cancel unwanted.bin' }).click()
    assert.equal((await ended).status(), 204)
    assert.equal(await alice.page.locator('.attachment').count(), 0)
    await alice.page.unrouteAll()
    const status = await alice.page.evaluate(async (url) => {
      return (await fetch(url, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0' } })).status
    }, location)
    assert.equal(status, 404)
    // The browser logs that 404 of the test's own request as a failed resource.
    cancelledUpload = location
  })

  await t.test("a refused type shows the gateway's message and offers no Resume", async () => {
    await attachByButton(alice.page, [{ name: 'page.html', mimeType: 'text/html', buffer: Buffer.from('<p>hi</p>') }])
    const row = alice.page.locator('.attachment-failed', { hasText: 'page.html' })
    await row.waitFor()
    assert.equal(await row.getByRole('button', { name: 'Resume page.html' }).count(), 0)
    assert.ok(((await row.getByRole('alert').textContent()) ?? '').length > 0)
    await row.getByRole('button', { name: 'Remove page.html' }).click()
    await row.waitFor({ state: 'detached' })
  })

  const expected = (error: string) => error.includes('status of 404') && error.includes(`${cancelledUpload})`)
  assert.deepEqual(
    withoutBrokenRequests(alice.errors).filter((error) => !expected(error)),
    [],
  )
  assert.deepEqual(bob.errors, [])
})
