import assert from 'node:assert/strict'
import { ChatMessFlags, createDatabase, timetickAt } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import type { Browser } from 'playwright-core'
import { newChatRow } from '../../../chat/src/chats/chats.repository.ts'
import type { ChatDatabase } from '../../../chat/src/db/schema.ts'
import { newMemberRow } from '../../../chat/src/members/members.repository.ts'
import { messageRow } from '../../../chat/test/admin.ts'
import { checkAccessibility } from './accessibility.ts'
import { launchBrowser, signInByEmail, startSystem } from './system.ts'

/** A page whose context lets axe's script in: the operator pages' CSP allows no script at all. */
async function operatorPage(browser: Browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-GB', bypassCSP: true })
  return context.newPage()
}

// Issue 21: the chat module's operator pages, reached through a real gateway.
forEachDialect(
  'an operator opens the chat admin dashboard, filters user files, opens a chat and removes a member (audited); others get 403',
  async (t, dialect) => {
    const browser = await launchBrowser(t)
    if (!browser) return
    const system = await startSystem(t, dialect, {
      Proxy: {
        Routes: [
          { Prefix: '/msg/', Upstream: 'chat', Flags: ['AppAuthAndCORS'] },
          { Prefix: '/ChatAdmin/', Upstream: 'chat', Flags: ['RequireSession'] },
        ],
      },
    })
    // The operator is made as `atrium user create --email … --scopes admin` makes one.
    const olga = await system.gateway.store.users.create({ name: 'Olga Operator', scopes: ['admin'] })
    await system.gateway.store.users.addContact(olga.crm_id, 1, 'olga@example.com', 1)

    // A group with files, written straight into ChatDB (a week ago, files of several kinds).
    const database = createDatabase<ChatDatabase>(system.chat.database)
    t.after(() => database.destroy())
    const created = timetickAt(Date.now() - 8 * 86_400_000)
    const team = { id: String(created) }
    await database.db
      .insertInto('chat_profiles')
      .values([
        { member: 501, name: 'Alice Archer', timetick_update: created },
        { member: 502, name: 'Bob Baker', timetick_update: created },
      ])
      .execute()
    await database.db
      .insertInto('chats')
      .values(newChatRow(created, { type: 2, owner: 501, name: 'Design team' }))
      .execute()
    await database.db
      .insertInto('chat_members')
      .values([newMemberRow(created, 501, 1, created), newMemberRow(created, 502, 0, created)])
      .execute()
    const start = timetickAt(Date.now() - 7 * 86_400_000)
    const files = ['mockup.png', 'brief.pdf', 'logo.svg', 'demo.mp4']
    await database.db
      .insertInto('chat_mess')
      .values(
        files.map((file_name, index) =>
          messageRow({
            timetick: start + index * 4096,
            timetick_update: start + index * 4096,
            chat_id: Number(team.id),
            owner: 501 + (index % 2),
            file_id: index + 1,
            file_name,
            file_size: 20_000 * (index + 1),
            flags: ChatMessFlags.File,
          }),
        ),
      )
      .execute()

    const page = await operatorPage(browser)
    await page.goto(`${system.url}/chat/sign-in`)
    await signInByEmail(page, system, 'olga@example.com')
    await page.goto(`${system.url}/ChatAdmin`)
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor()
    assert.equal(await page.locator('.card', { hasText: 'Groups' }).locator('.value').textContent(), '1')
    await checkAccessibility(page, 'chat-admin-dashboard')

    await page.getByRole('link', { name: 'User files' }).click()
    await page.getByRole('heading', { name: 'User files' }).waitFor()
    await page.getByLabel('Type').selectOption('image')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/FileType=image/)
    const names = await page.locator('tbody tr td:nth-child(3)').allTextContents()
    assert.deepEqual(
      names.map((name) => name.trim()),
      ['logo.svg', 'mockup.png'],
    )
    assert.equal(
      await page.getByRole('link', { name: 'Download' }).first().getAttribute('href'),
      `/auth/v2/file/${start + 2 * 4096}`,
    )
    await checkAccessibility(page, 'chat-admin-user-files')

    await page.locator('tbody tr').first().getByRole('link', { name: 'Design team' }).click()
    await page.getByRole('heading', { name: 'Design team' }).waitFor()
    await checkAccessibility(page, 'chat-admin-chat-detail')

    // An action through the gateway: the form post passes its Origin check, the member is gone from
    // ChatDB, the page says so, and the dashboard lists the operator's action by name.
    await page.getByRole('button', { name: 'Remove Bob Baker (502)' }).click()
    await page.getByText('Member removed from the chat.').waitFor()
    assert.equal(await page.getByRole('button', { name: 'Remove Bob Baker (502)' }).count(), 0)
    const left = await database.db
      .selectFrom('chat_members')
      .select('member')
      .where('chat_id', '=', Number(team.id))
      .execute()
    assert.deepEqual(
      left.map((row) => Number(row.member)),
      [501],
    )
    await page.getByRole('link', { name: 'Dashboard' }).click()
    const action = page.locator('tr', { hasText: 'remove_member' })
    await action.waitFor()
    assert.match((await action.textContent()) ?? '', /Olga Operator[\s\S]*chat:\d+[\s\S]*member:502/)

    // Every other section opens from the navigation and passes axe.
    const sections = { Chats: 'chats', Messages: 'messages', Members: 'members', Feedback: 'feedback' }
    for (const [name, slug] of Object.entries({
      ...sections,
      'File statistic': 'file-statistic',
      Calls: 'calls',
      Escalations: 'escalations',
    })) {
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true }).click()
      await page.getByRole('heading', { level: 1, name }).waitFor()
      await checkAccessibility(page, `chat-admin-${slug}`)
    }
    // Messages two at a time: the next page goes on from the oldest shown, newest first, none twice.
    await page.goto(`${system.url}/ChatAdmin/Messages?Limit=2`)
    const shown = async () =>
      (await page.locator('tbody tr td:nth-child(5)').allTextContents()).map((text) => text.trim())
    const pages = [await shown()]
    await page.getByRole('link', { name: 'Next page →' }).click()
    await page.waitForURL(/FromTick=\d+/)
    pages.push(await shown())
    assert.deepEqual(pages, [
      ['demo.mp4', 'logo.svg'],
      ['brief.pdf', 'mockup.png'],
    ])

    // A signed-in user without the admin scope gets the 403 page on every section.
    const bob = await operatorPage(browser)
    await bob.goto(`${system.url}/chat/sign-in`)
    await signInByEmail(bob, system, 'bob@example.com')
    const refused = await bob.goto(`${system.url}/ChatAdmin/UserFiles`)
    assert.equal(refused?.status(), 403)
    await bob.getByText('You need the admin scope').waitFor()
    await checkAccessibility(bob, 'chat-admin-refused')
  },
)
