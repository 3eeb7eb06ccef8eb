import { ChatMessFlags, type DatabaseDialect } from '@atrium/platform'
import { type Expression, type Kysely, type Selectable, type SqlBool, sql } from 'kysely'
import type { ChatDatabase, ChatMessTable } from '../db/schema.ts'

// Search skips soft-deleted rows and hidden widget commands only: reactions, widgets and calls are
// ordinary message rows and are found (spec: "Reactions, widgets and calls are stored as ordinary
// message rows, so search, forward and soft-delete apply to them").
const HIDDEN = ChatMessFlags.Deleted | ChatMessFlags.WidgetCommand

// The trigram tokenizer indexes runs of three characters, so MATCH finds nothing for shorter terms.
const TRIGRAM = 3

export interface SearchOptions {
  /** The caller's member id: only chats they belong to are searched. */
  member: number
  /** The user's text: every whitespace-separated word must appear in a message, case-insensitively. */
  query: string
  /** Restricts the search to one chat. */
  chatId?: number
  /** Only messages older than this id. */
  before?: number
  limit: number
}

/** All SQL of message search: FTS5 trigram MATCH on SQLite, pg_trgm-accelerated ILIKE on PostgreSQL. */
export function createSearchRepository(db: Kysely<ChatDatabase>, dialect: DatabaseDialect) {
  return {
    /** Visible messages of the member's chats containing every word of the query, newest first. */
    async search({ member, query, chatId, before, limit }: SearchOptions): Promise<Selectable<ChatMessTable>[]> {
      const terms = [...new Set(query.split(/\s+/u).filter((word) => word !== ''))]
      if (terms.length === 0) return []
      let select = db
        .selectFrom('chat_mess')
        .selectAll()
        .where('chat_id', 'in', db.selectFrom('chat_members').select('chat_id').where('member', '=', member))
        .where(sql<SqlBool>`(flags & ${HIDDEN}) = 0`)
      if (chatId !== undefined) select = select.where('chat_id', '=', chatId)
      if (before !== undefined) select = select.where('timetick', '<', before)
      for (const condition of dialect === 'postgres' ? terms.map(postgresContains) : sqliteContains(terms)) {
        select = select.where(condition)
      }
      return select.orderBy('timetick', 'desc').limit(limit).execute()
    },
  }
}

export type SearchRepository = ReturnType<typeof createSearchRepository>

function postgresContains(term: string): Expression<SqlBool> {
  return sql<SqlBool>`content ilike ${likePattern(term)} escape '\\'`
}

function sqliteContains(terms: string[]): Expression<SqlBool>[] {
  const indexed = terms.filter((term) => [...term].length >= TRIGRAM)
  const short = terms.filter((term) => [...term].length < TRIGRAM)
  const conditions = short.map((term) => {
    // SQLite's LIKE folds ASCII case only; trying the term lower, upper and capitalised finds
    // 'да' in 'Да' and 'ДА' too, which is as far as case-insensitivity goes without ICU.
    const [first = '', ...rest] = [...term]
    const variants = new Set([
      term,
      term.toLowerCase(),
      term.toUpperCase(),
      first.toUpperCase() + rest.join('').toLowerCase(),
    ])
    const likes = [...variants].map((variant) => sql<SqlBool>`content like ${likePattern(variant)} escape '\\'`)
    return sql<SqlBool>`(${sql.join(likes, sql` or `)})`
  })
  if (indexed.length > 0) {
    // Each term is an FTS5 string, so operators, column filters and * in user input are plain text.
    const match = indexed.map((term) => `"${term.replaceAll('"', '""')}"`).join(' AND ')
    conditions.unshift(
      sql<SqlBool>`chat_mess.timetick in (select rowid from chat_mess_fts where chat_mess_fts match ${match})`,
    )
  }
  return conditions
}

function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, '\\$&')}%`
}
