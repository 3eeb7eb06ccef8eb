import { compiledOnce } from '@atrium/platform'
import type { Kysely, Selectable } from 'kysely'
import type { ChatDatabase, ChatsTable } from '../db/schema.ts'

export type ChatRow = Selectable<ChatsTable>

// Runs on every send (compiled-once.ts).
const newerLastMessage = compiledOnce(
  ['chatId', 'messageId', 'tick'],
  (db: Kysely<ChatDatabase>, touch: { chatId: number; messageId: number; tick: number }) =>
    db
      .updateTable('chats')
      .set({ last_message: touch.messageId, timetick_update: touch.tick })
      .where('timetick', '=', touch.chatId)
      .where('last_message', '<', touch.messageId),
)

/** The pair key of the private chat of two members: the same whichever of them asks. */
export function pairKey(a: number, b: number): string {
  return `${Math.min(a, b)}:${Math.max(a, b)}`
}

/** A new chat row made at `tick`, every column not given at its default (a group's pair key is `#<id>`). */
export function newChatRow(tick: number, fields: Partial<ChatRow> & Pick<ChatRow, 'type' | 'owner'>): ChatRow {
  return {
    timetick: tick,
    timetick_update: tick,
    name: '',
    description: '',
    app_id: 0,
    archived: 0,
    pair_key: `#${tick}`,
    last_message: 0,
    ...fields,
  }
}

/** All SQL of the chats table. */
export function createChatsRepository(db: Kysely<ChatDatabase>) {
  return {
    async find(chatId: number): Promise<ChatRow | undefined> {
      return db.selectFrom('chats').selectAll().where('timetick', '=', chatId).executeTakeFirst()
    },

    async findByPair(pairKey: string): Promise<ChatRow | undefined> {
      return db.selectFrom('chats').selectAll().where('pair_key', '=', pairKey).executeTakeFirst()
    },

    async findMany(chatIds: number[]): Promise<ChatRow[]> {
      if (chatIds.length === 0) return []
      return db.selectFrom('chats').selectAll().where('timetick', 'in', chatIds).execute()
    },

    /** Inserts a chat; a private chat whose pair already has one is not inserted (returns false). */
    async insert(chat: ChatRow): Promise<boolean> {
      const result = await db
        .insertInto('chats')
        .values(chat)
        .onConflict((conflict) => conflict.column('pair_key').doNothing())
        .executeTakeFirst()
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1
    },

    async update(chatId: number, changes: Partial<Omit<ChatRow, 'timetick'>>): Promise<void> {
      await db.updateTable('chats').set(changes).where('timetick', '=', chatId).execute()
    },

    /** Moves last_message forward only, so concurrent sends cannot move it back. */
    async touchLastMessage(chatId: number, messageId: number, tick: number): Promise<void> {
      await newerLastMessage(db, { chatId, messageId, tick })
    },

    async setLastMessage(chatId: number, messageId: number): Promise<void> {
      await db.updateTable('chats').set({ last_message: messageId }).where('timetick', '=', chatId).execute()
    },

    async delete(chatId: number): Promise<void> {
      await db.deleteFrom('chats').where('timetick', '=', chatId).execute()
    },
  }
}

export type ChatsRepository = ReturnType<typeof createChatsRepository>
