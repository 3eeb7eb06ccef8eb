import type { Database, DatabaseDialect, TimetickGenerator } from '@atrium/platform'
import type { Kysely } from 'kysely'
import { createAdminActionsRepository } from './admin/admin-actions.repository.ts'
import { createCallsRepository } from './calls/calls.repository.ts'
import { createChatsRepository } from './chats/chats.repository.ts'
import type { ChatDatabase } from './db/schema.ts'
import { createSharedTransactions } from './db/shared-transactions.ts'
import { type ChatEventInput, createEventFeed, type EventFeed } from './events/event-feed.ts'
import { createFeedbackRepository } from './feedback/feedback.repository.ts'
import { createFileCatalog } from './files/file-catalog.ts'
import { createInvitesRepository } from './invites/invites.repository.ts'
import { createMailRepository } from './mail/mail.repository.ts'
import { createMembersRepository } from './members/members.repository.ts'
import { createDirectPosts, type DirectPostKey } from './messages/direct-post.ts'
import { toMessageEventData } from './messages/message-view.ts'
import { createMessagesRepository, type MessageRow } from './messages/messages.repository.ts'
import { createSendKeysRepository } from './messages/send-keys.repository.ts'
import { createProfilesRepository } from './profiles/profiles.repository.ts'
import { createSearchRepository } from './search/search.repository.ts'
import { indexPendingMessages } from './search/search-index.ts'
import { createEscalationsRepository } from './support/escalations.repository.ts'

function repositories(db: Kysely<ChatDatabase>, dialect: DatabaseDialect) {
  return {
    chats: createChatsRepository(db),
    calls: createCallsRepository(db),
    members: createMembersRepository(db),
    messages: createMessagesRepository(db),
    sendKeys: createSendKeysRepository(db),
    files: createFileCatalog(db),
    feedback: createFeedbackRepository(db),
    invites: createInvitesRepository(db),
    profiles: createProfilesRepository(db),
    search: createSearchRepository(db, dialect),
    escalations: createEscalationsRepository(db),
    mail: createMailRepository(db),
    adminActions: createAdminActionsRepository(db),
  }
}

/** The repositories of one transaction, plus recording events in it. */
export type Unit = ReturnType<typeof repositories> & { emit(event: ChatEventInput): Promise<number> }

/**
 * The chat module's data access: repositories over the pool for reads, and `transact` for writes,
 * which runs every repository in one transaction with the events it records and makes those
 * events readable right after the commit, before the operation answers. Inside `transact`,
 * use only the unit's repositories: SQLite has one connection, so a query through the store's
 * own repositories would wait for the transaction that is waiting for it. On SQLite, concurrent
 * operations share a transaction (each in a savepoint; see db/shared-transactions.ts), so work
 * inside `transact` must not wait for anything but the database.
 */
export function createStore(database: Database<ChatDatabase>, nextTick: TimetickGenerator) {
  const events: EventFeed = createEventFeed(database, nextTick)
  const runTransaction =
    database.dialect === 'sqlite'
      ? createSharedTransactions(database.db, indexPendingMessages)
      : <T>(work: (trx: Kysely<ChatDatabase>) => Promise<T>) => database.db.transaction().execute(work)

  async function transact<T>(work: (unit: Unit) => Promise<T>): Promise<T> {
    let recorded = false
    const result = await runTransaction((trx) =>
      work({
        ...repositories(trx, database.dialect),
        emit(event) {
          recorded = true
          return events.append(trx, event)
        },
      }),
    )
    if (recorded) await events.committed()
    return result
  }

  /**
   * PostgreSQL only (undefined on SQLite): posts a new message without reply as postMessage in
   * `transact` would, sharing one call and commit with concurrent sends (messages/direct-post.ts),
   * and resolves once its event is readable. Resolves false when the caller may not post there
   * (or the shared statement failed); the ordinary path then gives the exact error or posts.
   */
  const post = database.dialect === 'postgres' ? createDirectPosts(database.db, nextTick, events.announce) : undefined
  const postDirect =
    post &&
    ((row: MessageRow, key?: DirectPostKey): Promise<boolean> =>
      post(row, { timetick: nextTick(), data: JSON.stringify(toMessageEventData(row)) }, key))

  return { ...repositories(database.db, database.dialect), events, transact, postDirect, nextTick }
}

export type Store = ReturnType<typeof createStore>
