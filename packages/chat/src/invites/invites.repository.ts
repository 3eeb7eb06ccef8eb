import type { Kysely, Selectable } from 'kysely'
import type { ChatDatabase, GuestsTable, InvitesTable } from '../db/schema.ts'

export type InviteRow = Selectable<InvitesTable>
export type GuestRow = Selectable<GuestsTable>

/** Invite kinds: a personal invite gives each guest device its own conversation; a group invite joins the chat. */
export const InviteKind = { Personal: 1, Group: 2 } as const

/** All SQL of the invites and guests tables. */
export function createInvitesRepository(db: Kysely<ChatDatabase>) {
  return {
    async insert(row: InviteRow): Promise<void> {
      await db.insertInto('invites').values(row).execute()
    },

    async find(code: string): Promise<InviteRow | undefined> {
      return db.selectFrom('invites').selectAll().where('code', '=', code).where('revoked', '=', 0).executeTakeFirst()
    },

    async revoke(code: string): Promise<void> {
      await db.updateTable('invites').set({ revoked: 1 }).where('code', '=', code).execute()
    },

    /** The guest of a code and device while the invite is not revoked. */
    async findGuest(code: string, deviceGuid: string): Promise<GuestRow | undefined> {
      return db
        .selectFrom('guests')
        .innerJoin('invites', 'invites.code', 'guests.code')
        .selectAll('guests')
        .where('guests.code', '=', code)
        .where('guests.device_guid', '=', deviceGuid)
        .where('invites.revoked', '=', 0)
        .executeTakeFirst()
    },

    /** The guests among `guestIds` whose invite is not revoked. */
    async activeGuests(guestIds: number[]): Promise<number[]> {
      if (guestIds.length === 0) return []
      const rows = await db
        .selectFrom('guests')
        .innerJoin('invites', 'invites.code', 'guests.code')
        .select('guests.timetick')
        .where('guests.timetick', 'in', guestIds)
        .where('invites.revoked', '=', 0)
        .execute()
      return rows.map((row) => row.timetick)
    },

    /** Records a guest; when the same code and device won a concurrent race, returns false. */
    async insertGuest(row: GuestRow): Promise<boolean> {
      const result = await db
        .insertInto('guests')
        .values(row)
        .onConflict((conflict) => conflict.columns(['code', 'device_guid']).doNothing())
        .executeTakeFirst()
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1
    },

    async setGuestChat(guestId: number, chatId: number): Promise<void> {
      await db.updateTable('guests').set({ chat_id: chatId }).where('timetick', '=', guestId).execute()
    },
  }
}

export type InvitesRepository = ReturnType<typeof createInvitesRepository>
