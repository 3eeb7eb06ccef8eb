import type { DatabaseDialect, Service } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { ChatConfig } from '../config.ts'
import type { ChatDatabase } from '../db/schema.ts'
import type { Store } from '../store.ts'
import { createAdminReadsRepository } from './admin-reads.repository.ts'
import { requireOperator } from './admin-shell.ts'
import { callsPage } from './calls-page.ts'
import { chatsPages } from './chats-pages.ts'
import { dashboardPage } from './dashboard-page.ts'
import { escalationsPage } from './escalations-page.ts'
import { feedbackPage } from './feedback-page.ts'
import { filesPages } from './files-pages.ts'
import { membersPage } from './members-page.ts'
import { messagesPages } from './messages-pages.ts'
import { createUserFilesRepository } from './user-files.repository.ts'

/** What every page group of the panel is given. */
export interface AdminPageDeps {
  store: Store
  reads: ReturnType<typeof createAdminReadsRepository>
  files: ReturnType<typeof createUserFilesRepository>
  support: ChatConfig['Support']
  now: () => number
}

export interface ChatAdminPluginOptions {
  store: Store
  db: Kysely<ChatDatabase>
  dialect: DatabaseDialect
  support: ChatConfig['Support']
  now: () => number
  /**
   * Further page groups registered behind the same operator gate and form parser, e.g.
   * `botWidgetsPages` (/ChatAdmin/BotWidgets, already in the navigation).
   */
  extraPages?: Array<(app: Service, deps: AdminPageDeps) => void | Promise<void>>
}

const FORM = 'application/x-www-form-urlencoded'
// An action form carries a few ids and flags.
const FORM_BODY_LIMIT = 4096

/**
 * The chat module's operator pages, /ChatAdmin/ (spec: "Chat admin pages"; docs/chat-admin.md):
 * server-rendered HTML for operators (X-Scopes holds `admin`), reached through the gateway only
 * (the module already refuses requests without the gateway's signed hop). Lists are GET pages with
 * their filters in the URL; actions are POST forms answered by a redirect back with a notice.
 */
export default async function chatAdminPlugin(app: Service, options: ChatAdminPluginOptions) {
  const { store, db, dialect, support, now, extraPages = [] } = options
  app.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, function parseForm(_, body, done) {
    // Fields become plain properties; each action's body schema refuses anything else.
    done(null, Object.fromEntries(new URLSearchParams(body as string)))
  })
  app.decorateRequest('operator', 0)
  // Before the body is read or anything validated: every page and action answers a non-operator the same.
  app.addHook('onRequest', requireOperator)

  const deps: AdminPageDeps = {
    store,
    reads: createAdminReadsRepository(db, dialect),
    files: createUserFilesRepository(db, dialect),
    support,
    now,
  }
  for (const pages of [
    dashboardPage,
    chatsPages,
    messagesPages,
    membersPage,
    feedbackPage,
    filesPages,
    callsPage,
    escalationsPage,
    ...extraPages,
  ]) {
    await pages(app, deps)
  }
}
