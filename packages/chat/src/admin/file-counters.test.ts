import assert from 'node:assert/strict'
import { ChatMessFlags, migrateToLatest, signFileToken } from '@atrium/platform'
import { forEachDialect, openTestDatabase } from '@atrium/platform/testing'
import { messageRow, startChatAdmin } from '../../test/admin.ts'
import { createGroup, SERVICE_SECRET } from '../../test/support.ts'
import { chatMigrations } from '../db/migrations/index.ts'
import type { ChatDatabase } from '../db/schema.ts'
import { FILE_EXTENSIONS, FILE_TYPES } from './file-rows.ts'

/** The bucket of a name, computed here from the extension table: the text after the last dot, lower-cased. */
function bucketOf(name: string): string {
  const extension = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : ''
  return Object.entries(FILE_EXTENSIONS).find(([, list]) => list.includes(extension))?.[0] ?? 'other'
}

interface SentFile {
  name: string
  size: number
  deleted: boolean
}

/** Files and bytes by `type:deleted`, from what the test did. */
function tally(files: Iterable<SentFile>): Record<string, [number, number]> {
  const counts: Record<string, [number, number]> = {}
  for (const file of files) {
    const key = `${bucketOf(file.name)}:${file.deleted ? 1 : 0}`
    const [count, bytes] = counts[key] ?? [0, 0]
    counts[key] = [count + 1, bytes + file.size]
  }
  return counts
}

/** The day counters summed over days, by `type:deleted`, leaving out keys that came back to zero. */
async function counters(
  db: Awaited<ReturnType<typeof startChatAdmin>>['db'],
): Promise<Record<string, [number, number]>> {
  const rows = await db.selectFrom('chat_file_days').selectAll().execute()
  const counts: Record<string, [number, number]> = {}
  for (const row of rows) {
    const key = `${row.file_type}:${Number(row.deleted)}`
    const [count, bytes] = counts[key] ?? [0, 0]
    counts[key] = [count + Number(row.files), bytes + Number(row.bytes)]
  }
  for (const [key, [count, bytes]] of Object.entries(counts)) if (count === 0 && bytes === 0) delete counts[key]
  return counts
}

const sorted = (counts: Record<string, [number, number]>) => Object.fromEntries(Object.entries(counts).sort())

forEachDialect(
  'the file day counters follow files sent, edited, soft-deleted by users and operators and hard-deleted',
  async (t, dialect) => {
    const { chat, admin, db } = await startChatAdmin(t, dialect, { HardDelete: { Messages: true, Chats: true } })
    await chat.register(1, 2, 3)
    const team = await createGroup(chat.user(1), [2, 3])
    const doomed = await createGroup(chat.user(2), [1])
    const sent = new Map<string, SentFile>()
    const names = ['plan.pdf', 'Photo.JPG', 'clip.mp4', 'song.mp3', 'backup.tar.gz', 'notes', 'data.bin', 'scan.png']
    let upload = 7000
    async function sendFile(owner: number, chatId: string, name: string, size: number) {
      const token = signFileToken(SERVICE_SECRET, {
        id: ++upload,
        owner,
        name,
        size,
        type: 'application/octet-stream',
        expires: Date.now() + 60_000,
      })
      const message = await chat.user(owner).ok('send_message', { chat_id: chatId, content: '', file: token })
      sent.set(message.id, { name, size, deleted: false })
      return message.id as string
    }
    const ids: string[] = []
    for (const [index, name] of names.entries()) {
      ids.push(await sendFile(1 + (index % 2), team, name, 1000 * (index + 1)))
    }
    const inDoomed = [await sendFile(2, doomed, 'minutes.docx', 333), await sendFile(1, doomed, 'a.zip', 77)]
    // Plain text messages count nowhere.
    await chat.user(3).ok('send_message', { chat_id: team, content: 'no file here' })
    assert.deepEqual(sorted(await counters(db)), sorted(tally(sent.values())))

    // A caption edit moves the file's last change, not its bucket.
    await chat.user(1).ok('edit_message', { message_id: ids[0], content: 'the plan, v2' })
    // The sender soft-deletes one, an operator another.
    await chat.user(2).ok('soft_delete_message', { message_id: ids[1] })
    sent.get(ids[1]!)!.deleted = true
    const operator = await admin.action('/ChatAdmin/ChatDetail/DeleteMessage', { MessageId: ids[2]! })
    assert.equal(operator.status, 303)
    sent.get(ids[2]!)!.deleted = true
    // Hard deletes: one message, then a whole chat.
    await chat.user(2).ok('hard_delete_message', { message_id: ids[3] })
    sent.delete(ids[3]!)
    await chat.user(2).ok('hard_delete_chat', { chat_id: doomed })
    for (const id of inDoomed) sent.delete(id)
    // A deleted file hard-deleted leaves the deleted counter.
    await chat.user(2).ok('hard_delete_message', { message_id: ids[1] })
    sent.delete(ids[1]!)

    assert.deepEqual(sorted(await counters(db)), sorted(tally(sent.values())))
    // FileStatistic's total row shows the live files per bucket.
    const page = await admin.page('/ChatAdmin/FileStatistic')
    const total = /<tr><th>Total<\/th>(.*?)<\/tr>/.exec(page.html)
    assert.ok(total, page.html.slice(0, 500))
    const cells = [...total[1]!.matchAll(/<th class="num">(\d+) ·/g)].map((match) => Number(match[1]))
    const live = [...sent.values()].filter((file) => !file.deleted)
    assert.deepEqual(cells, [
      ...FILE_TYPES.map((type) => live.filter((file) => bucketOf(file.name) === type).length),
      live.length,
    ])
  },
)

forEachDialect('migration 0020 counts the file rows written before it', async (t, dialect) => {
  const database = await openTestDatabase<ChatDatabase>(t, dialect)
  await migrateToLatest(database, Object.fromEntries(Object.entries(chatMigrations).filter(([name]) => name < '0020')))
  const tick = (day: number, index: number) => (day * 86_400_000 + 3_600_000) * 4096 + index
  const rows = [
    messageRow({ timetick: tick(2000, 1), chat_id: 1, owner: 1, file_name: 'a.PNG', file_size: 10 }),
    messageRow({ timetick: tick(2000, 2), chat_id: 1, owner: 1, file_name: 'b.png', file_size: 5 }),
    messageRow({
      timetick: tick(2000, 3),
      chat_id: 1,
      owner: 1,
      file_name: 'c.pdf',
      file_size: 7,
      flags: ChatMessFlags.Deleted,
    }),
    messageRow({ timetick: tick(2001, 4), chat_id: 1, owner: 1, file_size: 3, flags: ChatMessFlags.File }),
    messageRow({ timetick: tick(2001, 5), chat_id: 1, owner: 1, content: 'text only' }),
  ]
  await database.db.insertInto('chat_mess').values(rows).execute()
  await migrateToLatest(database, chatMigrations)
  const counted = await database.db
    .selectFrom('chat_file_days')
    .selectAll()
    .orderBy('day')
    .orderBy('file_type')
    .orderBy('deleted')
    .execute()
  assert.deepEqual(
    counted.map((row) => [Number(row.day), row.file_type, Number(row.deleted), Number(row.files), Number(row.bytes)]),
    [
      [2000, 'doc', 1, 1, 7],
      [2000, 'image', 0, 2, 15],
      [2001, 'other', 0, 1, 3],
    ],
  )
})
