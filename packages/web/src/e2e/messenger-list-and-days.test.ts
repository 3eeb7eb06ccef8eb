import assert from 'node:assert/strict'
import { createDatabase, timetickAt } from '@atrium/platform'
import { errorCodes } from '@atrium/platform/errors'
import { forEachDialect } from '@atrium/platform/testing'
import type { Page } from 'playwright-core'
import { FAILURE_WORDS } from '../api/failure-words.ts'
import { checkAccessibility } from './accessibility.ts'
import { createGroup, openPrivateChat, send, signedInPerson } from './steps.ts'
import { launchBrowser, type System, startSystem } from './system.ts'

// openPage's browsers: British English in Berlin. Expected words are computed here the same way.
const LOCALE = 'en-GB'
const ZONE = 'Europe/Berlin'

/** 11:00 UTC (noon in Berlin, either side of daylight saving) on the Berlin day `days` before today. */
function berlinNoon(daysBefore: number): Date {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: ZONE }).format(new Date()) // yyyy-mm-dd
  const [year, month, day] = today.split('-').map(Number)
  return new Date(Date.UTC(year!, month! - 1, day! - daysBefore, 11, 0))
}

const format = (options: Intl.DateTimeFormatOptions, date: Date) =>
  new Intl.DateTimeFormat(LOCALE, { timeZone: ZONE, ...options }).format(date)

/** The columns of chat_mess a past message needs; the others keep their defaults. */
interface PastMessages {
  chat_mess: { timetick: number; timetick_update: number; chat_id: number; owner: number; content: string }
}

/** Writes messages of the past straight into the chat database: the API only sends them now. */
async function insertPastMessages(
  system: System,
  chatId: string,
  messages: { owner: string; at: Date; content: string }[],
) {
  const { db, destroy } = createDatabase<PastMessages>(system.chat.database)
  try {
    for (const [index, message] of messages.entries()) {
      const tick = timetickAt(message.at.getTime()) + index
      await db
        .insertInto('chat_mess')
        .values({
          timetick: tick,
          timetick_update: tick,
          chat_id: Number(chatId),
          owner: Number(message.owner),
          content: message.content,
        })
        .execute()
    }
  } finally {
    await destroy()
  }
}

const row = (page: Page, chatId: string) => page.locator(`[data-chat-id="${chatId}"]`)

forEachDialect(
  'the chat list shows the last message and its time live; the conversation separates days and groups messages',
  async (t, dialect) => {
    const browser = await launchBrowser(t)
    if (!browser) return
    const system = await startSystem(t, dialect)
    const alice = await signedInPerson(browser, system, 'alice@example.com', 'Alice')
    const bob = await signedInPerson(browser, system, 'bob@example.com', 'Bob')
    const bobId = bob.crmId

    const chatId = await openPrivateChat(alice.page, bobId)

    // Bob's messages of earlier days: ten days ago, three days ago (two a minute apart, one ten
    // minutes later) and yesterday.
    const threeDaysAgo = berlinNoon(3)
    const past = [
      { owner: bobId, at: berlinNoon(10), content: 'Ten days ago' },
      { owner: bobId, at: threeDaysAgo, content: 'Three days ago, first' },
      { owner: bobId, at: new Date(threeDaysAgo.getTime() + 60_000), content: 'Three days ago, a minute later' },
      {
        owner: bobId,
        at: new Date(threeDaysAgo.getTime() + 10 * 60_000),
        content: 'Three days ago, ten minutes later',
      },
      { owner: bobId, at: berlinNoon(1), content: 'See you tomorrow' },
    ]
    await insertPastMessages(system, chatId, past)

    await t.test('a new message becomes the row of the other side, with its time, live', async () => {
      await alice.page.getByRole('textbox', { name: 'Message' }).fill('Lunch at **noon**?')
      await alice.page.keyboard.press('Enter')
      const sent = alice.page.locator('.message.mine', { hasText: 'Lunch at noon?' })
      await sent.waitFor()
      const bobsRow = row(bob.page, chatId)
      await bobsRow.locator('.chat-preview', { hasText: 'Lunch at noon?' }).waitFor()
      assert.equal(await bobsRow.locator('.chat-name').textContent(), 'Alice')
      // A private chat's row names nobody before the peer's words; one's own row says "You".
      assert.equal(await bobsRow.locator('.chat-preview').textContent(), 'Lunch at noon?')
      await row(alice.page, chatId).locator('.chat-preview', { hasText: 'You: Lunch at noon?' }).waitFor()
      const time = bobsRow.locator('time.chat-time')
      const sentAt = new Date((await time.getAttribute('datetime')) ?? '')
      assert.ok(Math.abs(sentAt.getTime() - Date.now()) < 60_000, 'the time of the message just sent')
      assert.equal(await time.textContent(), format({ hour: '2-digit', minute: '2-digit' }, sentAt))
      await checkAccessibility(bob.page, 'chat-list-last-message')
    })

    await t.test('an edit and a delete of the last message change the row live', async () => {
      const id = await alice.page
        .locator('.message.mine', { hasText: 'Lunch at noon?' })
        .getAttribute('data-message-id')
      const sent = alice.page.locator(`.messages [data-message-id="${id}"]`)
      await sent.getByRole('button', { name: 'Actions', exact: true }).click()
      await sent.getByRole('button', { name: 'Edit', exact: true }).click()
      await alice.page.getByRole('textbox', { name: 'Message' }).fill('Lunch at one?')
      await alice.page.getByRole('button', { name: 'Save' }).click()
      await row(bob.page, chatId).locator('.chat-preview', { hasText: 'Lunch at one?' }).waitFor()

      await sent.getByRole('button', { name: 'Actions', exact: true }).click()
      await sent.getByRole('button', { name: 'Delete', exact: true }).click()
      await sent.getByRole('button', { name: 'Delete', exact: true }).click()
      // The deleted message leaves the conversation, so the row goes back to the message before it.
      await row(bob.page, chatId).locator('.chat-preview', { hasText: 'You: See you tomorrow' }).waitFor()
      assert.equal(
        await row(bob.page, chatId).locator('time.chat-time').textContent(),
        format({ weekday: 'short' }, berlinNoon(1)),
      )
      await row(alice.page, chatId).locator('.chat-preview', { hasText: 'See you tomorrow' }).waitFor()
    })

    await t.test('the conversation separates days and groups one sender’s messages within minutes', async () => {
      await alice.page.getByRole('textbox', { name: 'Message' }).fill('Morning!')
      await alice.page.keyboard.press('Enter')
      // The composer sends one message at a time: the next Enter counts once this one is posted.
      await alice.page.locator('.message.mine', { hasText: 'Morning!' }).waitFor()
      await alice.page.getByRole('textbox', { name: 'Message' }).fill('Coffee first.')
      await alice.page.keyboard.press('Enter')
      await alice.page.locator('.message.mine', { hasText: 'Coffee first.' }).waitFor()
      await alice.page.reload()
      await alice.page.locator('.message', { hasText: 'Ten days ago' }).waitFor()
      const separators = await alice.page.locator('.messages .day-separator').allInnerTexts()
      assert.deepEqual(separators, [
        format({ day: 'numeric', month: 'long', year: 'numeric' }, berlinNoon(10)),
        format({ weekday: 'long' }, threeDaysAgo),
        'Yesterday',
        'Today',
      ])
      // Separators are headings, so a screen reader can go from day to day.
      assert.equal(await alice.page.getByRole('heading', { name: 'Yesterday', level: 3 }).count(), 1)

      const message = (text: string) => alice.page.locator('.message', { hasText: text })
      const continued = async (text: string) =>
        ((await message(text).getAttribute('class')) ?? '').includes('continued')
      assert.equal(await continued('Three days ago, first'), false)
      assert.equal(await continued('Three days ago, a minute later'), true)
      assert.equal(await continued('Three days ago, ten minutes later'), false, 'ten minutes apart starts a group')
      assert.equal(await continued('Morning!'), false)
      assert.equal(await continued('Coffee first.'), true)
      // A grouped message hides its sender and time from the eye (a 1-pixel clipped box), not from
      // the accessibility tree: a screen reader still hears who and when.
      const width = (text: string, part: string) =>
        message(text)
          .locator(part)
          .evaluate((element) => element.getBoundingClientRect().width)
      assert.ok((await width('Three days ago, a minute later', '.sender')) <= 1)
      assert.ok((await width('Three days ago, a minute later', 'time')) <= 1)
      assert.ok((await width('Three days ago, first', '.sender')) > 10)
      const minuteLater = format({ hour: '2-digit', minute: '2-digit' }, new Date(threeDaysAgo.getTime() + 60_000))
      const heard = await message('Three days ago, a minute later').ariaSnapshot()
      assert.match(heard, new RegExp(`Bob[\\s\\S]*${minuteLater}[\\s\\S]*Three days ago, a minute later`))
      await alice.page.locator('.message', { hasText: 'Ten days ago' }).scrollIntoViewIfNeeded()
      await checkAccessibility(alice.page, 'conversation-days-and-groups')
    })

    await t.test('the composer counts down near the length limit and says when a text is too long', async () => {
      const field = alice.page.getByRole('textbox', { name: 'Message' })
      const counter = alice.page.locator('#composer-length')
      await field.fill('x'.repeat(15_000))
      assert.equal(await counter.count(), 0, 'no counter far from the limit')
      await field.fill('x'.repeat(16_384 - 999))
      await counter.getByText('999 characters left').waitFor()
      assert.equal(await field.getAttribute('aria-describedby'), 'composer-length')
      // An emoji is one character, as the chat module counts.
      await field.fill('😀'.repeat(16_385))
      const alert = alice.page.getByRole('alert').filter({ hasText: 'too long' })
      await alert.waitFor()
      assert.equal(
        await alert.textContent(),
        'This message is 1 character too long: messages hold at most 16,384 characters. Shorten it or split it into several messages.',
      )
      assert.equal(await field.getAttribute('aria-invalid'), 'true')
      assert.equal(await alice.page.getByRole('button', { name: 'Send' }).isDisabled(), true)
      assert.equal(await field.inputValue(), '😀'.repeat(16_385), 'the text is never cut')
      await checkAccessibility(alice.page, 'composer-too-long')
      await field.fill('😀'.repeat(16_384))
      await counter.getByText('0 characters left').waitFor()
      await alice.page.getByRole('button', { name: 'Send' }).click()
      await row(bob.page, chatId).locator('.chat-preview', { hasText: '😀😀😀' }).waitFor()
      await alice.page.locator('#composer-length').waitFor({ state: 'detached' })

      // The long message opens folded with "Show more", the only one of the conversation; it
      // unfolds and folds again, and its whole text stays in the page either way.
      const longId = await alice.page.locator('.message.mine').last().getAttribute('data-message-id')
      const long = alice.page.locator(`[data-message-id="${longId}"]`)
      const more = long.getByRole('button', { name: 'Show more' })
      await more.waitFor()
      assert.equal(await alice.page.getByRole('button', { name: 'Show more' }).count(), 1)
      const height = () => long.locator('.long-message').evaluate((element) => element.getBoundingClientRect().height)
      const folded = await height()
      assert.equal(await more.getAttribute('aria-expanded'), 'false')
      const whole = (await long.locator('.message-content').textContent())?.trim()
      assert.ok(whole === '😀'.repeat(16_384), `the whole text is in the page (${whole?.length} UTF-16 units)`)
      await checkAccessibility(alice.page, 'long-message-folded')
      await more.click()
      const less = long.getByRole('button', { name: 'Show less' })
      assert.equal(await less.getAttribute('aria-expanded'), 'true')
      assert.ok((await height()) > 3 * folded, `unfolded ${await height()} px against ${folded} px folded`)
      await less.click()
      assert.equal(await height(), folded)
      // A jump to it (here from a reply's quote) shows it unfolded.
      await long.getByRole('button', { name: 'Actions', exact: true }).click()
      await long.getByRole('button', { name: 'Reply', exact: true }).click()
      const reply = await send(alice.page, 'About that')
      await alice.page.locator(`[data-message-id="${reply}"] .reply-preview`).click()
      await long.getByRole('button', { name: 'Show less' }).waitFor()
      assert.ok((await height()) > 3 * folded)
    })

    await t.test(
      'a chat muted for 8 hours is marked in the list and its unread count greyed, until unmuted',
      async () => {
        const openInfo = async () => {
          await row(bob.page, chatId).locator('a').click()
          await bob.page.getByRole('button', { name: 'Chat info' }).click()
        }
        await openInfo()
        await bob.page.getByRole('button', { name: 'Mute notifications' }).click()
        await checkAccessibility(bob.page, 'chat-info-mute-choices')
        const before = Date.now()
        await bob.page.getByRole('button', { name: 'For 8 hours' }).click()
        await bob.page.getByRole('button', { name: 'Unmute notifications' }).waitFor()
        const after = Date.now()
        // Chat info beside the conversation leaves its title room: the name shows whole, not cut.
        const title = bob.page.locator('.conversation-title h2')
        const shown = await title.evaluate((h2) => [h2.clientWidth, h2.scrollWidth])
        assert.ok(shown[0]! > 0 && shown[1]! <= shown[0]!, `title ${shown.join(' of ')} px`)
        assert.match((await bob.page.getByTestId('mute-state').textContent()) ?? '', /^🔕 Muted until \S/)
        // The mute the server stored ends 8 hours after the click.
        const { result } = await bob.page.evaluate(async (id) => {
          const answer = await fetch(`/msg/v1/get_chat_info?chat_id=${id}`)
          return answer.json()
        }, chatId)
        const ends = Date.parse(result.muted_until)
        assert.ok(ends >= before + 8 * 3_600_000 && ends <= after + 8 * 3_600_000, result.muted_until)
        await checkAccessibility(bob.page, 'chat-info-muted')
        await bob.page.getByRole('button', { name: 'Close chat info' }).click()

        const bobsRow = row(bob.page, chatId)
        assert.match(
          (await bobsRow.locator('.mute-mark').getAttribute('title')) ?? '',
          /^Muted until .+: no notifications$/,
        )
        // With the chat closed, Alice's next message counts as unread, greyed rather than in the accent.
        await bob.page.goto(`${system.url}/chat/`)
        await alice.page.getByRole('textbox', { name: 'Message' }).fill('Still there?')
        await alice.page.keyboard.press('Enter')
        const badge = bobsRow.locator('.unread-badge')
        await badge.waitFor()
        assert.equal(await bobsRow.getAttribute('class'), 'has-unread muted-chat')
        const colours = await badge.evaluate((element) => ({
          badge: getComputedStyle(element).backgroundColor,
          muted: getComputedStyle(element).getPropertyValue('--muted').trim(),
        }))
        assert.equal(colours.muted, '#5b6470')
        assert.equal(colours.badge, 'rgb(91, 100, 112)')
        await checkAccessibility(bob.page, 'chat-list-muted')

        await openInfo()
        await bob.page.getByRole('button', { name: 'Unmute notifications' }).click()
        await bob.page.getByRole('button', { name: 'Mute notifications' }).waitFor()
        await bob.page.getByRole('button', { name: 'Close chat info' }).click()
        await bobsRow.locator('.mute-mark').waitFor({ state: 'detached' })
        assert.equal(await bobsRow.getAttribute('class'), null)

        // A timed mute ends by itself: the list's mark and Chat info's state go once its end passes,
        // with no reload. "For 1 hour" is sent as a mute of four seconds.
        const update = '**/msg/v1/update_member'
        let shortEnd = 0
        await bob.page.route(update, (route) => {
          shortEnd = Date.now() + 4000
          const body = { ...route.request().postDataJSON(), muted_until: new Date(shortEnd).toISOString() }
          return route.continue({ postData: JSON.stringify(body) })
        })
        await openInfo()
        await bob.page.getByRole('button', { name: 'Mute notifications' }).click()
        await bob.page.getByRole('button', { name: 'For 1 hour' }).click()
        await bob.page.getByRole('button', { name: 'Unmute notifications' }).waitFor()
        await bob.page.unroute(update)
        await bobsRow.locator('.mute-mark').waitFor()
        await bob.page.getByRole('button', { name: 'Mute notifications' }).waitFor({ timeout: 20_000 })
        await bobsRow.locator('.mute-mark').waitFor({ state: 'detached' })
        assert.ok(Date.now() >= shortEnd, 'shown as muted until its end')
      },
    )

    await t.test('Ctrl+K finds a chat by name and opens it with the focus in its message field', async () => {
      const page = alice.page
      for (const name of ['Team lunch', 'Design review']) await createGroup(page, name)
      await openPrivateChat(page, bobId)
      const switcher = page.getByRole('dialog', { name: 'Go to chat' })
      const field = switcher.getByRole('combobox', { name: 'Chat or person' })
      const options = switcher.getByRole('option')

      // With nothing typed it offers the list's own chats, in the list's order.
      await page.keyboard.press('Control+k')
      await field.waitFor()
      assert.equal(await field.evaluate((element) => element === document.activeElement), true)
      const listed = await page.locator('.chat-list .chat-name').allInnerTexts()
      assert.deepEqual(await options.locator('.switcher-name').allInnerTexts(), listed.slice(0, 8))
      await checkAccessibility(page, 'quick-switcher')

      // A word's start finds it whatever the case; Enter opens it, ready to write.
      await field.fill('LUN')
      assert.deepEqual(await options.locator('.switcher-name').allInnerTexts(), ['Team lunch'])
      await page.keyboard.press('Enter')
      await page.getByRole('heading', { name: 'Team lunch' }).waitFor()
      await switcher.waitFor({ state: 'detached' })
      await page.waitForFunction(() => document.activeElement?.id === 'composer-text')

      // Nothing found says so; Escape closes and gives the focus back.
      await page.getByRole('button', { name: /Go to chat/ }).click()
      await field.fill('no such chat')
      await switcher.getByText('No chat or person called “no such chat”.').waitFor()
      await page.keyboard.press('Escape')
      await switcher.waitFor({ state: 'detached' })
      await page.waitForFunction(() => document.activeElement?.textContent?.includes('Go to chat'))

      // The arrows move the choice (the field names it to screen readers); Enter opens it.
      await page.keyboard.press('Control+k')
      await field.fill('e')
      const offered = await options.locator('.switcher-name').allInnerTexts()
      assert.ok(offered.length >= 2, offered.join(', '))
      await page.keyboard.press('ArrowDown')
      const chosen = switcher.locator('[role="option"][aria-selected="true"]')
      assert.equal(await chosen.locator('.switcher-name').textContent(), offered[1])
      assert.equal(await field.getAttribute('aria-activedescendant'), await chosen.getAttribute('id'))
      await page.keyboard.press('Enter')
      await page.getByRole('heading', { name: offered[1] }).waitFor()
    })

    await t.test('Ctrl+K also finds people without a private chat yet and starts one with them', async () => {
      const carol = await signedInPerson(browser, system, 'carol@example.com', 'Carol Quinn')
      const page = alice.page
      const switcher = page.getByRole('dialog', { name: 'Go to chat' })
      const field = switcher.getByRole('combobox', { name: 'Chat or person' })
      const people = switcher.getByRole('group', { name: 'People' }).getByRole('option')
      const chats = switcher.getByRole('group', { name: 'Chats' }).getByRole('option')
      /** The browser logs a request this test refused as an error (soon after); it is no fault. */
      async function dropRefused(url: string) {
        const refused = () => alice.errors.findIndex((error) => error.includes(url))
        for (let waited = 0; refused() === -1 && waited < 5000; waited += 100) await page.waitForTimeout(100)
        assert.ok(refused() >= 0, alice.errors.join('\n'))
        alice.errors.splice(refused(), 1)
      }

      // Bob has a private chat with Alice already: he is offered as that chat, not as a person.
      await page.keyboard.press('Control+k')
      // The list is busy until the people search for what was typed has answered.
      const searched = switcher.locator('[role="listbox"][aria-busy="false"]')
      await field.fill('Bo')
      await searched.waitFor()
      assert.deepEqual(await chats.locator('.switcher-name').allInnerTexts(), ['Bob'])
      assert.equal(await people.count(), 0)
      // Alice is never offered to herself.
      await field.fill('Alice')
      await switcher.getByText('No chat or person called “Alice”.').waitFor()
      // A people search that fails is told apart from one that found nobody.
      const search = '**/auth/v1/people?*'
      await page.route(search, (route) => route.fulfill({ status: 502, body: '' }))
      await field.fill('Carol')
      await switcher.getByText('No chat called “Carol”, and people could not be looked up just now.').waitFor()
      await page.unroute(search)
      await dropRefused('/auth/v1/people')

      // Carol, found by a word of her name, below the chats; a failed start is told, and the
      // switcher stays open to try again.
      await field.fill('quin')
      await people.first().waitFor()
      assert.deepEqual(await people.locator('.switcher-name').allInnerTexts(), ['Carol Quinn'])
      assert.equal(await people.locator('.switcher-kind').textContent(), 'New private chat')
      assert.equal(await field.getAttribute('aria-activedescendant'), `switcher-person-${carol.crmId}`)
      await checkAccessibility(page, 'quick-switcher-people')
      const start = '**/msg/v1/create_private_chat'
      await page.route(start, (route) =>
        route.fulfill({
          status: 502,
          contentType: 'application/json',
          body: JSON.stringify({
            error: { code: errorCodes.BadGateway.code, message: 'the chat module is down' },
            id: 'test',
          }),
        }),
      )
      await page.keyboard.press('Enter')
      assert.equal(await switcher.getByRole('alert').textContent(), FAILURE_WORDS.BadGateway)
      await page.unroute(start)
      await dropRefused('create_private_chat')
      await page.keyboard.press('Enter')
      await switcher.waitFor({ state: 'detached' })
      await page.getByRole('heading', { name: 'Carol Quinn' }).waitFor()
      await page.waitForFunction(() => document.activeElement?.id === 'composer-text')
      await page.locator('.chat-list .chat-name', { hasText: 'Carol Quinn' }).waitFor()

      // Now that the chat exists, Carol is offered as it.
      await page.keyboard.press('Control+k')
      await field.fill('quin')
      await searched.waitFor()
      assert.deepEqual(await chats.locator('.switcher-name').allInnerTexts(), ['Carol Quinn'])
      assert.equal(await people.count(), 0)
      await page.keyboard.press('Escape')
      assert.deepEqual(carol.errors, [])
    })

    assert.deepEqual([...alice.errors, ...bob.errors], [])
  },
)
