import { ChatMessFlags, hasFlag, type Service, timetickAt, timetickTime } from '@atrium/platform'
import { adminHref, adminTime, emptyState, filterForm, html, pager } from '@atrium/platform/admin'
import { Type } from 'typebox'
import type { AdminPageDeps } from './admin.plugin.ts'
import {
  ADMIN_ROOT,
  DateParam,
  FlagParam,
  flagOf,
  IdParam,
  ListQuery,
  limitOf,
  NumberParam,
  numberOf,
  personLabel,
  sendPage,
  TextParam,
  tickRange,
} from './admin-shell.ts'
import { chatTitle, pairPeople } from './chats-pages.ts'
import { FILE_TYPES, type FileType, fileTypeOf } from './file-rows.ts'
import { dayStart, type FileStatisticFilter, type UserFilesFilter } from './user-files.repository.ts'

const USER_FILES = `${ADMIN_ROOT}/UserFiles`
const FILE_STATISTIC = `${ADMIN_ROOT}/FileStatistic`
/** FileStatistic without DateFrom covers this many days up to today. */
const STATISTIC_DAYS = 30

const FileTypeParam = Type.Optional(
  Type.Union([...FILE_TYPES.map((type) => Type.Literal(type)), Type.Literal('')], {
    description: 'Bucket by extension: image, doc, video, audio, archive, other.',
  }),
)

const fileFilters = {
  OwnerId: IdParam('Files of this chat_mess owner (CRM id).'),
  FileName: TextParam('Substring of file_name (case-sensitive).'),
  FileType: FileTypeParam,
  MinSize: NumberParam('Smallest file_size in bytes.'),
  MaxSize: NumberParam('Largest file_size in bytes.'),
  DateFrom: DateParam('timetick_update at or after (UTC).'),
  DateTo: DateParam('timetick_update before the end of this day, or before this instant (UTC).'),
  Timetick: IdParam('Exactly this message.'),
  ShowDeleted: FlagParam('true: soft-deleted messages too; otherwise they are excluded.'),
}

const userFilesQuery = Type.Object({ ...fileFilters, ...ListQuery })
// The filters the day counters answer, and OwnerId (that owner's rows); name and size filters are UserFiles'.
const statisticFilters = ['OwnerId', 'FileType', 'DateFrom', 'DateTo', 'ShowDeleted'] as const
const statisticQuery = Type.Pick(Type.Object(fileFilters), statisticFilters)

type FileQuery = { [Name in keyof typeof fileFilters]?: string }

function filterOf(query: FileQuery): Omit<UserFilesFilter, 'limit' | 'fromTick'> {
  const dates = tickRange(query.DateFrom, query.DateTo)
  return {
    ownerId: numberOf(query.OwnerId),
    fileName: query.FileName || undefined,
    fileType: (query.FileType || undefined) as FileType | undefined,
    minSize: numberOf(query.MinSize),
    maxSize: numberOf(query.MaxSize),
    updatedMin: dates.min,
    updatedBelow: dates.below,
    timetick: numberOf(query.Timetick),
    showDeleted: flagOf(query.ShowDeleted),
  }
}

function fileFields(query: FileQuery) {
  return [
    { name: 'OwnerId', label: 'Owner (CRM id)', value: query.OwnerId ?? '' },
    { name: 'FileName', label: 'Name contains', value: query.FileName ?? '' },
    {
      name: 'FileType',
      label: 'Type',
      value: query.FileType ?? '',
      options: [['', 'Any'] as [string, string], ...FILE_TYPES.map((type): [string, string] => [type, type])],
    },
    { name: 'MinSize', label: 'Min bytes', value: query.MinSize ?? '', type: 'number' as const },
    { name: 'MaxSize', label: 'Max bytes', value: query.MaxSize ?? '', type: 'number' as const },
    { name: 'DateFrom', label: 'From (UTC)', value: query.DateFrom ?? '', type: 'date' as const },
    { name: 'DateTo', label: 'To (UTC)', value: query.DateTo ?? '', type: 'date' as const },
    { name: 'Timetick', label: 'Message id', value: query.Timetick ?? '' },
    {
      name: 'ShowDeleted',
      label: 'Show deleted',
      value: flagOf(query.ShowDeleted) ? 'true' : '',
      type: 'checkbox' as const,
    },
  ]
}

/** 1,234,567 bytes as "1.2 MB". */
export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  const units = ['KB', 'MB', 'GB', 'TB']
  let value = bytes / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`
}

/** /ChatAdmin/UserFiles (spec: every filter of its table) and /ChatAdmin/FileStatistic. */
export function filesPages(app: Service, { store, files, now }: AdminPageDeps) {
  app.get(
    USER_FILES,
    { schema: { hide: true, querystring: userFilesQuery }, config: { envelope: false } },
    async (request, reply) => {
      const query = request.query
      const limit = limitOf(query.Limit)
      const { rows, searchedTo } = await files.list({ ...filterOf(query), fromTick: numberOf(query.FromTick), limit })
      const chats = await store.chats.findMany([...new Set(rows.map((row) => row.chat_id))])
      const names = await store.profiles.names([...new Set([...rows.map((row) => row.owner), ...pairPeople(chats)])])
      const chatNames = new Map(chats.map((chat) => [chat.timetick, chatTitle(chat, names)]))
      const ownerId = numberOf(query.OwnerId)
      const next =
        rows.length === limit ? adminHref(USER_FILES, { ...query, FromTick: rows.at(-1)!.timetick_update }) : undefined
      // The read stopped at its budget (user-files.repository.ts): say how far it looked, and go on from there.
      const further =
        searchedTo !== undefined &&
        html`<p class="pager">Searched files changed down to ${adminTime(timetickTime(searchedTo))}; older files were not searched yet.
          <a href=${adminHref(USER_FILES, { ...query, FromTick: searchedTo })} rel="next">Older files →</a></p>`
      const body = html`
      ${filterForm(USER_FILES, [
        ...fileFields(query),
        { name: 'Limit', label: 'Rows', value: query.Limit ?? '', type: 'number', placeholder: '100' },
      ])}
      ${
        ownerId !== undefined &&
        html`<p>Owner: ${personLabel(names, ownerId)} · <a href=${adminHref('/CrmAdmin/UserDetail', { timetick: ownerId })}>Open in the CRM</a></p>`
      }
      ${
        rows.length === 0
          ? emptyState(
              searchedTo === undefined
                ? 'No file matches these filters. Clear them, or tick "Show deleted".'
                : 'No file matches these filters among the files searched so far.',
            )
          : html`<table>
              <thead><tr><th>Changed</th><th>Owner</th><th>File</th><th>Type</th><th class="num">Size</th><th>Chat</th><th>Download</th></tr></thead>
              <tbody>
                ${rows.map(
                  (row) => html`<tr data-id=${String(row.timetick)}>
                    <td>${adminTime(timetickTime(row.timetick_update))}</td>
                    <td>${personLabel(names, row.owner)}</td>
                    <td>${row.file_name || html`<span class="muted">(no name)</span>`}
                      ${hasFlag(row.flags, ChatMessFlags.Deleted) && html` <span class="muted">deleted</span>`}</td>
                    <td>${fileTypeOf(row.file_name)}</td>
                    <td class="num" title=${`${row.file_size} bytes`}>${byteSize(row.file_size)}</td>
                    <td><a href=${adminHref(`${ADMIN_ROOT}/ChatDetail`, { ChatId: row.chat_id })}>${chatNames.get(row.chat_id) ?? row.chat_id}</a></td>
                    <td><a href=${`/auth/v2/file/${row.timetick}`}>Download</a></td>
                  </tr>`,
                )}
              </tbody>
            </table>`
      }
      ${further || pager(next)}`
      return sendPage(reply, { title: 'User files', current: USER_FILES, body })
    },
  )

  app.get(
    FILE_STATISTIC,
    { schema: { hide: true, querystring: statisticQuery }, config: { envelope: false } },
    async (request, reply) => {
      const query = request.query
      const { ownerId, fileType, updatedMin, updatedBelow, showDeleted } = filterOf(query)
      const filter: FileStatisticFilter = { ownerId, fileType, updatedMin, updatedBelow, showDeleted }
      // Without a start the statistic covers the last STATISTIC_DAYS days: a summary, not a scan of every file.
      if (!query.DateFrom) {
        const today = Math.floor(now() / 86_400_000) * 86_400_000
        filter.updatedMin = timetickAt(today - (STATISTIC_DAYS - 1) * 86_400_000)
      }
      const buckets = await files.statistic(filter)
      const days = [...new Set(buckets.map((bucket) => bucket.day))]
      const cell = (day: number, type: FileType) =>
        buckets.find((bucket) => bucket.day === day && bucket.fileType === type)
      const totals = FILE_TYPES.map((type) => {
        const of = buckets.filter((bucket) => bucket.fileType === type)
        return { files: of.reduce((sum, b) => sum + b.files, 0), bytes: of.reduce((sum, b) => sum + b.bytes, 0) }
      })
      const body = html`
      ${filterForm(
        FILE_STATISTIC,
        fileFields(query).filter((field) => (statisticFilters as readonly string[]).includes(field.name)),
      )}
      <p>Files and bytes per type and UTC day of their last change${
        query.DateFrom ? '' : `, over the last ${STATISTIC_DAYS} days unless From is set`
      }, whole days. For a file name or size, search User files.</p>
      ${
        days.length === 0
          ? emptyState('No file matches these filters in this period.')
          : html`<table>
              <thead><tr><th>Day (UTC)</th>${FILE_TYPES.map((type) => html`<th class="num">${type}</th>`)}<th class="num">all</th></tr></thead>
              <tbody>
                ${days.map((day) => {
                  const all = buckets.filter((bucket) => bucket.day === day)
                  const date = new Date(dayStart(day)).toISOString().slice(0, 10)
                  return html`<tr>
                    <td><a href=${adminHref(USER_FILES, { ...query, DateFrom: date, DateTo: date })}>${date}</a></td>
                    ${FILE_TYPES.map((type) => {
                      const bucket = cell(day, type)
                      return html`<td class="num">${bucket ? html`${bucket.files} <span class="muted">${byteSize(bucket.bytes)}</span>` : '0'}</td>`
                    })}
                    <td class="num">${all.reduce((sum, b) => sum + b.files, 0)} <span class="muted">${byteSize(all.reduce((sum, b) => sum + b.bytes, 0))}</span></td>
                  </tr>`
                })}
                <tr>
                  <th>Total</th>
                  ${totals.map((total) => html`<th class="num">${total.files} · ${byteSize(total.bytes)}</th>`)}
                  <th class="num">${totals.reduce((sum, t) => sum + t.files, 0)} · ${byteSize(totals.reduce((sum, t) => sum + t.bytes, 0))}</th>
                </tr>
              </tbody>
            </table>`
      }`
      return sendPage(reply, { title: 'File statistic', current: FILE_STATISTIC, body })
    },
  )
}
