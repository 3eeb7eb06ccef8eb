import type { DatabaseDialect } from '@atrium/platform'
import { type Expression, type Kysely, type Selectable, type SqlBool, sql } from 'kysely'
import type { ChatDatabase, ChatMessTable } from '../db/schema.ts'
import { HIDDEN_FLAGS } from '../db/visibility.ts'

// Search skips soft-deleted rows and hidden widget commands only: reactions, widgets and calls are
// ordinary message rows and are found (spec: "Reactions, widgets and calls are stored as ordinary
// message rows, so search, forward and soft-delete apply to them").

// The trigram tokenizer indexes runs of three characters, so MATCH finds nothing for shorter terms.
const TRIGRAM = 3
// Rows of one chat that the PostgreSQL walk reads before it leaves the search to the trigram index:
// enough for a word in one message of 200, a few milliseconds.
const WALK_BUDGET = 4000

type MessageRow = Selectable<ChatMessTable>

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

const isIndexed = (term: string) => [...term].length >= TRIGRAM

/**
 * All SQL of message search: FTS5 trigram MATCH on SQLite; on PostgreSQL a newest-first walk of
 * the member's chats, then, when that walk is not enough, pg_trgm-accelerated ILIKE.
 */
export function createSearchRepository(db: Kysely<ChatDatabase>, dialect: DatabaseDialect) {
  const memberChats = (member: number) => db.selectFrom('chat_members').select('chat_id').where('member', '=', member)

  // SQLite with a term of three or more characters: the FTS5 index drives the query newest first
  // (FTS5 walks rowids in descending order), each match is checked against the caller's chats, and
  // the walk stops at the limit instead of collecting every match in the database first. The chat
  // check probes the small (chat_id, timetick) index before the row is read: for a caller whose
  // chats hold few of the matches, reading every match's row took most of the time (issue 3: half
  // the time of a word search in one small chat among a million messages).
  async function searchIndexed(
    { member, chatId, before, limit }: SearchOptions,
    terms: string[],
  ): Promise<MessageRow[]> {
    // Each term is an FTS5 string, so operators, column filters and * in user input are plain text.
    const match = terms
      .filter(isIndexed)
      .map((term) => `"${term.replaceAll('"', '""')}"`)
      .join(' AND ')
    const shortTerms = likeConditions(
      terms.filter((term) => !isIndexed(term)),
      sql.ref('m.content'),
    )
    const filters = [...(before === undefined ? [] : [sql`chat_mess_fts.rowid < ${before}`]), ...shortTerms]
    const { rows } = await sql<MessageRow>`
      select m.* from chat_mess_fts join chat_mess m on m.timetick = chat_mess_fts.rowid
      where chat_mess_fts match ${match}
        and exists (select 1 from chat_members cm
          join chat_mess c indexed by chat_mess_chat on c.chat_id = cm.chat_id and c.timetick = chat_mess_fts.rowid
          where cm.member = ${member} ${chatId === undefined ? sql`` : sql`and cm.chat_id = ${chatId}`})
        and (m.flags & ${sql.lit(HIDDEN_FLAGS)}) = 0
        ${filters.length > 0 ? sql`and ${sql.join(filters, sql` and `)}` : sql``}
      order by chat_mess_fts.rowid desc limit ${limit}`.execute(db)
    return rows
  }

  // PostgreSQL: each chat walked newest first with a row budget (chat_search_recent, migration 0005);
  // undefined when a walk ran out of budget before the answer was certain.
  async function searchRecent(
    { member, chatId, before, limit }: SearchOptions,
    terms: string[],
  ): Promise<MessageRow[] | undefined> {
    const patterns = terms.map(likePattern)
    const { rows } = await sql<MessageRow>`select * from chat_search_recent(${member}, ${chatId ?? 0},
      ${patterns}, ${before ?? Number.MAX_SAFE_INTEGER}, ${limit}, ${WALK_BUDGET})`.execute(db)
    return rows.some((row) => row.timetick === 0) ? undefined : rows
  }

  return {
    /** Visible messages of the member's chats containing every word of the query, newest first. */
    async search(options: SearchOptions): Promise<MessageRow[]> {
      const terms = [...new Set(options.query.split(/\s+/u).filter((word) => word !== ''))]
      if (terms.length === 0) return []
      if (dialect === 'sqlite' && terms.some(isIndexed)) return searchIndexed(options, terms)
      if (dialect === 'postgres') {
        const recent = await searchRecent(options, terms)
        if (recent) return recent
      }
      const { member, chatId, before, limit } = options
      let select = db
        .selectFrom('chat_mess')
        .selectAll()
        .where('chat_id', 'in', memberChats(member))
        .where(sql<SqlBool>`(flags & ${sql.lit(HIDDEN_FLAGS)}) = 0`)
      if (chatId !== undefined) select = select.where('chat_id', '=', chatId)
      if (before !== undefined) select = select.where('timetick', '<', before)
      const contains =
        dialect === 'postgres'
          ? terms.map((term) => sql<SqlBool>`content ilike ${likePattern(term)} escape '\\'`)
          : likeConditions(terms, sql.ref('content'))
      for (const condition of contains) select = select.where(condition)
      return select.orderBy('timetick', 'desc').limit(limit).execute()
    },
  }
}

export type SearchRepository = ReturnType<typeof createSearchRepository>

// SQLite's LIKE folds ASCII case only, and only terms shorter than a trigram come here (longer
// ones go to FTS5, which folds every case): each term is tried in every combination of its
// characters' case forms, so 'су' finds 'ГосУслуги' (issue 14, item 13): a character has at most
// a few case forms and a term at most two characters, so a term makes a handful of patterns.
function likeConditions(terms: string[], column: Expression<string>): Expression<SqlBool>[] {
  return terms.map((term) => {
    const likes = caseVariants(term).map((variant) => sql<SqlBool>`${column} like ${likePattern(variant)} escape '\\'`)
    return sql<SqlBool>`(${sql.join(likes, sql` or `)})`
  })
}

/** Every spelling of a short term with each character in each of its one-character case forms. */
function caseVariants(term: string): string[] {
  let variants = ['']
  for (const character of term) {
    const forms = new Set(
      [character, character.toLowerCase(), character.toUpperCase(), character.toUpperCase().toLowerCase()].filter(
        // 'ß' upper-cases to 'SS': another text, not another case of it.
        (form) => [...form].length === 1,
      ),
    )
    variants = variants.flatMap((prefix) => [...forms].map((form) => prefix + form))
  }
  return variants
}

function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, '\\$&')}%`
}
