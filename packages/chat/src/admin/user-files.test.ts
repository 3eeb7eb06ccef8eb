import assert from 'node:assert/strict'
import { ChatMessFlags, timetickAt } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { messageRow, nextLink, rowIds, startChatAdmin } from '../../test/admin.ts'
import type { MessageRow } from '../messages/messages.repository.ts'
import { FILE_EXTENSIONS } from './file-rows.ts'

const DAY = 86_400_000
const FIRST_DAY = Date.UTC(2026, 10, 1)
const NAMES = [
  'photo.JPG',
  'report.pdf',
  'clip.mp4',
  'song.mp3',
  'backup.tar.gz',
  'notes',
  'weird.name.png',
  'Дом.docx',
  'Report-final.PDF',
  'archive.7z',
  'voice.ogg',
  'scan.jpeg',
  'data.bin',
  'IMG_2041.heic',
  '100%done.txt',
  '',
]

/** Varied chat_mess rows over five days: files with and without names, sizes and the File flag, deleted ones, plain text. */
function seedRows(): MessageRow[] {
  const rows: MessageRow[] = []
  for (let index = 0; index < 140; index++) {
    const created = FIRST_DAY + (index % 5) * DAY + index * 61_000
    const timetick = timetickAt(created) + (index % 7)
    // Some rows changed later (edited, deleted): timetick_update orders the list, not timetick.
    const updated = index % 4 === 0 ? timetickAt(created + ((index * 37) % 3) * DAY + 5_000) + index : timetick
    const name = NAMES[index % NAMES.length]!
    const plain = index % 11 === 3
    let flags = plain ? 0 : index % 3 === 0 ? 0 : ChatMessFlags.File
    if (index % 9 === 0) flags |= ChatMessFlags.Deleted
    rows.push({
      timetick,
      timetick_update: updated,
      chat_id: 1000 + (index % 3),
      owner: 1 + (index % 4),
      content: plain ? `hello ${index}` : '',
      file_id: plain ? 0 : index + 1,
      file_name: plain ? '' : name,
      // Zero-size named files and unnamed sized files are files too.
      file_size: plain ? 0 : [0, 512, 4096, 70_000, 2_500_000][index % 5]!,
      file_type: '',
      flags,
      linked_message_id: 0,
      link_kind: 0,
      forwarded_from: 0,
      edited: 0,
    })
  }
  return rows
}

/** The bucket of a name, computed here from the extension table: the text after the last dot, lower-cased. */
function bucketOf(name: string): string {
  const extension = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : ''
  return Object.entries(FILE_EXTENSIONS).find(([, list]) => list.includes(extension))?.[0] ?? 'other'
}

const dayStart = (date: string) => Date.parse(`${date}T00:00:00Z`)
const tickMs = (tick: number) => Math.floor(tick / 4096) + Date.UTC(2020, 0, 1)

/** What UserFiles must answer for these parameters, computed from the seeded rows. */
function expected(rows: MessageRow[], query: Record<string, string>): number[] {
  const limit = query.Limit ? Math.min(10_000, Math.max(1, Number(query.Limit))) : 100
  return rows
    .filter((row) => row.file_size !== 0 || row.file_name !== '' || (row.flags & ChatMessFlags.File) !== 0)
    .filter((row) => query.ShowDeleted === 'true' || (row.flags & ChatMessFlags.Deleted) === 0)
    .filter((row) => !query.OwnerId || row.owner === Number(query.OwnerId))
    .filter((row) => !query.FileName || row.file_name.includes(query.FileName))
    .filter((row) => !query.FileType || bucketOf(row.file_name) === query.FileType)
    .filter((row) => !query.MinSize || row.file_size >= Number(query.MinSize))
    .filter((row) => !query.MaxSize || row.file_size <= Number(query.MaxSize))
    .filter((row) => !query.DateFrom || tickMs(row.timetick_update) >= dayStart(query.DateFrom))
    .filter((row) => !query.DateTo || tickMs(row.timetick_update) < dayStart(query.DateTo) + DAY)
    .filter((row) => !query.Timetick || row.timetick === Number(query.Timetick))
    .filter((row) => !query.FromTick || row.timetick_update < Number(query.FromTick))
    .sort((a, b) => b.timetick_update - a.timetick_update)
    .slice(0, limit)
    .map((row) => row.timetick)
}

const date = (offset: number) => new Date(FIRST_DAY + offset * DAY).toISOString().slice(0, 10)

forEachDialect('UserFiles answers every filter of the spec exactly, alone and combined', async (t, dialect) => {
  const { chat, admin, db } = await startChatAdmin(t, dialect)
  await chat.register([1, 'Alice Archer'], [2, 'Bob Baker'], 3, 4)
  const rows = seedRows()
  await db.insertInto('chat_mess').values(rows).execute()
  const deleted = rows.find((row) => (row.flags & ChatMessFlags.Deleted) !== 0 && row.file_name !== '')!
  const middle = [...rows].sort((a, b) => a.timetick_update - b.timetick_update)[70]!.timetick_update

  const cases: Record<string, string>[] = [
    {},
    { ShowDeleted: 'true' },
    { ShowDeleted: 'false' },
    { OwnerId: '2' },
    { OwnerId: '3', ShowDeleted: 'true' },
    { FileName: 'report' },
    { FileName: 'JPG' },
    { FileName: 'Дом' },
    // LIKE's wildcards are plain characters here.
    { FileName: '_' },
    { FileName: '%' },
    { FileName: 'G_2' },
    ...['image', 'doc', 'video', 'audio', 'archive', 'other'].map((FileType) => ({ FileType })),
    { MinSize: '4096' },
    { MaxSize: '4096' },
    { MinSize: '1', MaxSize: '70000' },
    { DateFrom: date(2) },
    { DateTo: date(1) },
    { DateFrom: date(1), DateTo: date(3), ShowDeleted: 'true' },
    { Timetick: String(deleted.timetick) },
    { Timetick: String(deleted.timetick), ShowDeleted: 'true' },
    { FromTick: String(middle) },
    { Limit: '5' },
    { Limit: '0' },
    { Limit: '99999' },
    { OwnerId: '1', FileType: 'image', ShowDeleted: 'true', MinSize: '100' },
    // A GET form sends every field, the empty ones too.
    { OwnerId: '', FileName: '', FileType: '', MinSize: '', MaxSize: '', DateFrom: '', DateTo: '', Limit: '' },
  ]
  for (const query of cases) {
    const page = await admin.page('/ChatAdmin/UserFiles', undefined, query)
    assert.equal(page.status, 200, `${JSON.stringify(query)}: ${page.html.slice(0, 300)}`)
    const want = expected(rows, query)
    assert.deepEqual(rowIds(page.html), want, JSON.stringify(query))
  }
  // Limit 0 is clamped up to one row; the filters above left something to find.
  assert.equal(expected(rows, { Limit: '0' }).length, 1)
  assert.ok(expected(rows, { FileType: 'archive' }).length > 0)
})

forEachDialect('UserFiles pages with FromTick until every file was shown once, in order', async (t, dialect) => {
  const { admin, db } = await startChatAdmin(t, dialect)
  const rows = seedRows()
  await db.insertInto('chat_mess').values(rows).execute()
  const seen: number[] = []
  let url: string | undefined = '/ChatAdmin/UserFiles?Limit=7&ShowDeleted=true'
  while (url) {
    const [path, search] = url.split('?') as [string, string]
    const page = await admin.page(path, undefined, Object.fromEntries(new URLSearchParams(search)))
    assert.equal(page.status, 200)
    seen.push(...rowIds(page.html))
    url = nextLink(page.html)
  }
  assert.deepEqual(seen, expected(rows, { ShowDeleted: 'true', Limit: '10000' }))
})

forEachDialect('UserFiles links each row to its download and an owner to the CRM', async (t, dialect) => {
  const { chat, admin, db } = await startChatAdmin(t, dialect)
  await chat.register([2, 'Bob Baker'])
  const rows = seedRows()
  await db.insertInto('chat_mess').values(rows).execute()
  const page = await admin.page('/ChatAdmin/UserFiles', undefined, { OwnerId: '2', Limit: '3' })
  const ids = rowIds(page.html)
  assert.equal(ids.length, 3)
  for (const id of ids) assert.ok(page.html.includes(`href="/auth/v2/file/${id}"`), `download link of ${id}`)
  assert.ok(page.html.includes('href="/CrmAdmin/UserDetail?timetick=2"'))
  assert.ok(page.html.includes('Bob Baker (2)'))
  const all = await admin.page('/ChatAdmin/UserFiles')
  assert.ok(!all.html.includes('/CrmAdmin/UserDetail'), 'no CRM link without OwnerId')
})

forEachDialect('FileStatistic counts files and bytes per type and day as the rows say', async (t, dialect) => {
  const { admin, db } = await startChatAdmin(t, dialect)
  const rows = seedRows()
  await db.insertInto('chat_mess').values(rows).execute()
  const page = await admin.page('/ChatAdmin/FileStatistic', undefined, { DateFrom: date(0), DateTo: date(9) })
  assert.equal(page.status, 200)
  const live = rows.filter(
    (row) =>
      (row.file_size !== 0 || row.file_name !== '' || (row.flags & ChatMessFlags.File) !== 0) &&
      (row.flags & ChatMessFlags.Deleted) === 0,
  )
  for (const offset of [0, 1, 2, 3, 4, 5, 6]) {
    const day = date(offset)
    const ofDay = live.filter((row) => new Date(tickMs(row.timetick_update)).toISOString().startsWith(day))
    const row = new RegExp(`<tr><td><a [^>]+>${day}</a></td>(.*?)</tr>`).exec(page.html)
    if (ofDay.length === 0) {
      assert.equal(row, null, `${day} has no files`)
      continue
    }
    assert.ok(row, `a row for ${day}`)
    const cells = [...row[1]!.matchAll(/<td class="num">(\d+)/g)].map((match) => Number(match[1]))
    const want = ['image', 'doc', 'video', 'audio', 'archive', 'other'].map(
      (type) => ofDay.filter((file) => bucketOf(file.file_name) === type).length,
    )
    assert.deepEqual(cells, [...want, ofDay.length], day)
  }
})

forEachDialect(
  'UserFiles reads at most 5,000 file rows a page and says where a rare filter stopped, continuing from there',
  async (t, dialect) => {
    const { admin, db } = await startChatAdmin(t, dialect)
    const budget = 5000
    const first = timetickAt(FIRST_DAY)
    // 12,000 file rows, one per tick; a few are named "needle", one of those deleted; every tenth is deleted.
    const needles = new Set([10, 4000, 4999, 5000, 9000, 11_990, 11_999])
    const rows: MessageRow[] = Array.from({ length: 12_000 }, (_, index) =>
      messageRow({
        timetick: first + index,
        chat_id: 1,
        owner: 1 + (index % 3),
        file_name: needles.has(index) ? `needle-${index}.txt` : `hay-${index}.bin`,
        file_size: 100 + index,
        flags: ChatMessFlags.File | (index % 10 === 0 && index !== 11_990 ? ChatMessFlags.Deleted : 0),
      }),
    )
    for (let offset = 0; offset < rows.length; offset += 1000) {
      await db
        .insertInto('chat_mess')
        .values(rows.slice(offset, offset + 1000))
        .execute()
    }
    const newestFirst = [...rows].reverse()
    const edge = (pages: number) => newestFirst[pages * budget - 1]!.timetick_update

    const firstPage = await admin.page('/ChatAdmin/UserFiles', undefined, { FileName: 'needle' })
    const wantFirst = expected(newestFirst.slice(0, budget), { FileName: 'needle' })
    assert.deepEqual(rowIds(firstPage.html), wantFirst)
    assert.match(firstPage.html, /Searched files changed down to .*older files were not searched yet/s)
    assert.match(firstPage.html, /Older files →/)
    assert.equal(new URLSearchParams(nextLink(firstPage.html)!.split('?')[1]).get('FromTick'), String(edge(1)))

    // Following "Older files" (and next pages) shows every match exactly once, in order, then ends.
    const seen: number[] = []
    let stops = 0
    let url: string | undefined = '/ChatAdmin/UserFiles?FileName=needle&Limit=2'
    while (url) {
      const [path, search] = url.split('?') as [string, string]
      const query = Object.fromEntries(new URLSearchParams(search))
      const page = await admin.page(path, undefined, query)
      seen.push(...rowIds(page.html))
      url = nextLink(page.html)
      if (page.html.includes('Older files →')) {
        // The walk read exactly 5,000 file rows below the page's cursor and stopped at the last of them.
        const start = query.FromTick ? newestFirst.findIndex((row) => row.timetick_update < Number(query.FromTick)) : 0
        const stop = Number(new URLSearchParams(url!.split('?')[1]).get('FromTick'))
        assert.equal(newestFirst.findIndex((row) => row.timetick_update === stop) - start + 1, budget)
        stops++
      }
    }
    assert.deepEqual(seen, expected(rows, { FileName: 'needle', Limit: '10000' }))
    assert.ok(seen.length >= 3 && stops >= 2, `${seen.length} rows, ${stops} stops`)

    // A filter nothing matches ends with an honest empty page and a way on, never a full scan.
    const none = await admin.page('/ChatAdmin/UserFiles', undefined, { MinSize: '999999999' })
    assert.deepEqual(rowIds(none.html), [])
    assert.match(none.html, /No file matches these filters among the files searched so far/)
    // Filters the index walks exactly (owner, dates, cursor) are not cut: a full page comes back.
    const owner = await admin.page('/ChatAdmin/UserFiles', undefined, { OwnerId: '2', Limit: '10000' })
    assert.deepEqual(rowIds(owner.html), expected(rows, { OwnerId: '2', Limit: '10000' }))
  },
)
