import type { Kysely, Selectable } from 'kysely'
import type { ChatDatabase, MailContactsTable, MailMessagesTable } from '../db/schema.ts'

export type MailContactRow = Selectable<MailContactsTable>
export type MailMessageRow = Selectable<MailMessagesTable>

/** The cursor name of the reply sender in mail_state. */
export const REPLY_CURSOR = 'replies'

/** All SQL of the email bridge's tables (migration 0015). */
export function createMailRepository(db: Kysely<ChatDatabase>) {
  return {
    async contact(member: number): Promise<MailContactRow | undefined> {
      return db.selectFrom('mail_contacts').selectAll().where('member', '=', member).executeTakeFirst()
    },

    /** True once any chat has an email sender. */
    async hasContacts(): Promise<boolean> {
      return (await db.selectFrom('mail_contacts').select('member').limit(1).executeTakeFirst()) !== undefined
    },

    /** The email senders of a chat. */
    async contactsOf(chatId: number): Promise<MailContactRow[]> {
      return db.selectFrom('mail_contacts').selectAll().where('chat_id', '=', chatId).orderBy('member').execute()
    },

    /** Inserts or refreshes a contact after an inbound mail (its thread state and chat). */
    async saveContact(row: MailContactRow): Promise<void> {
      const { member: _, ...update } = row
      await db
        .insertInto('mail_contacts')
        .values(row)
        .onConflict((conflict) => conflict.column('member').doUpdateSet(update))
        .execute()
    },

    /**
     * The contact with this sender address that one of the Message-IDs (In-Reply-To, References)
     * belongs to, newest first: the thread a reply continues.
     */
    async threadOf(address: string, messageIds: string[]): Promise<MailContactRow | undefined> {
      if (messageIds.length === 0) return undefined
      return db
        .selectFrom('mail_messages')
        .innerJoin('mail_contacts', 'mail_contacts.member', 'mail_messages.member')
        .selectAll('mail_contacts')
        .where('mail_messages.message_id', 'in', messageIds)
        .where('mail_contacts.address', '=', address)
        .orderBy('mail_messages.mess_id', 'desc')
        .executeTakeFirst()
    },

    async findMessage(messageId: string, member: number): Promise<MailMessageRow | undefined> {
      return db
        .selectFrom('mail_messages')
        .selectAll()
        .where('message_id', '=', messageId)
        .where('member', '=', member)
        .executeTakeFirst()
    },

    /** Records a Message-ID; false when this contact has it already (a retried delivery). */
    async addMessage(row: MailMessageRow): Promise<boolean> {
      const result = await db
        .insertInto('mail_messages')
        .values(row)
        .onConflict((conflict) => conflict.columns(['message_id', 'member']).doNothing())
        .executeTakeFirst()
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1
    },

    async userInvite(crmId: number): Promise<string | undefined> {
      const row = await db.selectFrom('mail_user_invites').select('code').where('crm_id', '=', crmId).executeTakeFirst()
      return row?.code
    },

    /** Records a user's hidden invite; false when a concurrent mail recorded one first. */
    async addUserInvite(crmId: number, code: string): Promise<boolean> {
      const result = await db
        .insertInto('mail_user_invites')
        .values({ crm_id: crmId, code })
        .onConflict((conflict) => conflict.column('crm_id').doNothing())
        .executeTakeFirst()
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1
    },

    /**
     * True for a registered person: a profile that is not a guest's (mail senders are guests with
     * a profile holding the name they wrote with).
     */
    async isUser(member: number): Promise<boolean> {
      const row = await db
        .selectFrom('chat_profiles')
        .select('member')
        .where('member', '=', member)
        .where('member', 'not in', db.selectFrom('guests').select('timetick'))
        .executeTakeFirst()
      return row !== undefined
    },

    /** The cursor of `name`; undefined before its first use. */
    async cursor(name: string): Promise<number | undefined> {
      const row = await db.selectFrom('mail_state').select('cursor').where('name', '=', name).executeTakeFirst()
      return row === undefined ? undefined : Number(row.cursor)
    },

    async initCursor(name: string, cursor: number): Promise<void> {
      await db
        .insertInto('mail_state')
        .values({ name, cursor })
        .onConflict((conflict) => conflict.column('name').doNothing())
        .execute()
    },

    /** Moves a cursor from `from` to `to`; false when another instance moved it first. */
    async claim(name: string, from: number, to: number): Promise<boolean> {
      const result = await db
        .updateTable('mail_state')
        .set({ cursor: to })
        .where('name', '=', name)
        .where('cursor', '=', from)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) === 1
    },

    /**
     * NewChatMessage events after the cursor, up to `head`, in chats with an email contact: what
     * the reply sender reads. Event ticks are assigned after commit, so none is skipped.
     */
    async newMessagesAfter(cursor: number, head: number, limit: number) {
      return db
        .selectFrom('chat_events')
        .select(['tick_update', 'chat_id', 'data'])
        .where('event_type', '=', 'NewChatMessage')
        .where('tick_update', '>', cursor)
        .where('tick_update', '<=', head)
        .where('chat_id', 'in', db.selectFrom('mail_contacts').select('chat_id'))
        .orderBy('tick_update')
        .limit(limit)
        .execute()
    },

    /** The newest readable event tick. */
    async head(): Promise<number> {
      const row = await db
        .selectFrom('chat_events')
        .select((eb) => eb.fn.max('tick_update').as('max'))
        .executeTakeFirst()
      return Number(row?.max ?? 0)
    },
  }
}

export type MailRepository = ReturnType<typeof createMailRepository>
