import assert from 'node:assert/strict'
import { forEachDialect } from '@atrium/platform/testing'
import { nextLink, startChatAdmin } from '../../test/admin.ts'

/** The customers' CRM ids of an Escalations page, in row order. */
function customers(html: string): number[] {
  return [...html.matchAll(/ChatDetail\?ChatId=\d+">Customer \d+ \((\d+)\)<\/a>/g)].map((match) => Number(match[1]))
}

forEachDialect('Escalations pages with FromTick, the longest waiting first, each chat once', async (t, dialect) => {
  const { chat, admin } = await startChatAdmin(t, dialect, { Support: { TeamCrmIds: ['50'], EscalateAfterSeconds: 1 } })
  const waiting = [101, 102, 103, 104, 105, 106, 107]
  await chat.register(50, ...waiting.map((id): [number, string] => [id, `Customer ${id}`]))
  // One after another, so each waits since a later message than the one before.
  for (const customer of waiting) {
    const support = await chat.user(customer).ok('open_support_chat')
    await chat.user(customer).ok('send_message', { chat_id: support.chat.id, content: `help ${customer}` })
  }

  const pages: number[][] = []
  let url: string | undefined = '/ChatAdmin/Escalations?Limit=3'
  while (url) {
    assert.ok(pages.length < 5, 'the cursor moves on')
    const [path, search] = url.split('?') as [string, string]
    const page = await admin.page(path, undefined, Object.fromEntries(new URLSearchParams(search)))
    assert.equal(page.status, 200)
    pages.push(customers(page.html))
    url = nextLink(page.html)
    if (url) assert.match(url, /^\/ChatAdmin\/Escalations\?Limit=3&FromTick=\d+$/)
  }
  assert.deepEqual(pages, [waiting.slice(0, 3), waiting.slice(3, 6), waiting.slice(6)])

  // A full last page still links on; the page after it is empty and says so.
  const all = await admin.page('/ChatAdmin/Escalations', undefined, { Limit: String(waiting.length) })
  assert.deepEqual(customers(all.html), waiting)
  const after = await admin.page(
    '/ChatAdmin/Escalations',
    undefined,
    Object.fromEntries(new URLSearchParams(nextLink(all.html)!.split('?')[1])),
  )
  assert.deepEqual(customers(after.html), [])
  assert.match(after.html, /No more customers waiting after the previous page/)
})
