import { createHash } from 'node:crypto'
import { readBool, writeBool } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { ChatDatabase } from '../db/schema.ts'

/** A person's Telegram link as the repository reads it. */
export interface TelegramLink {
  member: number
  telegramChatId: number
  telegramName: string
  notify: boolean
  linked: number
}

/** What consuming a link token found. */
export type TokenUse = { kind: 'valid'; member: number } | { kind: 'expired' } | { kind: 'unknown' }

/** What binding a Telegram chat to a person did. */
export type BindResult = { kind: 'linked'; replaced: boolean } | { kind: 'taken' }

/** The SHA-256 of a link token in hex: tokens are stored and looked up only by it. */
export function hashLinkToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

function toLink(row: ChatDatabase['telegram_links']): TelegramLink {
  return {
    member: row.member,
    telegramChatId: row.telegram_chat_id,
    telegramName: row.telegram_name,
    notify: readBool(row.notify),
    linked: row.linked,
  }
}

// PostgreSQL's unique_violation, or SQLite's constraint message: the Telegram chat is someone else's.
function isUniqueViolation(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown }
  return code === '23505' || (typeof message === 'string' && message.includes('UNIQUE constraint failed'))
}

/** All SQL of the telegram_links and telegram_link_tokens tables. */
export function createTelegramRepository(db: Kysely<ChatDatabase>) {
  return {
    /** The link of a person, or undefined. */
    async linkOf(member: number): Promise<TelegramLink | undefined> {
      const row = await db.selectFrom('telegram_links').selectAll().where('member', '=', member).executeTakeFirst()
      return row && toLink(row)
    },

    /** The link of a Telegram chat, or undefined. */
    async linkOfChat(telegramChatId: number): Promise<TelegramLink | undefined> {
      const row = await db
        .selectFrom('telegram_links')
        .selectAll()
        .where('telegram_chat_id', '=', telegramChatId)
        .executeTakeFirst()
      return row && toLink(row)
    },

    /**
     * Stores a fresh token for a person, replacing any earlier one of theirs (only the newest link
     * works), and drops every expired token while at it.
     */
    async issueToken(member: number, tokenHash: string, expires: number, now: number): Promise<void> {
      await db
        .deleteFrom('telegram_link_tokens')
        .where((eb) => eb.or([eb('member', '=', member), eb('expires', '<', now)]))
        .execute()
      await db.insertInto('telegram_link_tokens').values({ token_hash: tokenHash, member, expires }).execute()
    },

    /**
     * Removes a token and says whose it was: one DELETE … RETURNING, so of two parallel uses only
     * one finds it. An expired token is removed too, and reported as expired.
     */
    async consumeToken(tokenHash: string, now: number): Promise<TokenUse> {
      const row = await db
        .deleteFrom('telegram_link_tokens')
        .where('token_hash', '=', tokenHash)
        .returning(['member', 'expires'])
        .executeTakeFirst()
      if (!row) return { kind: 'unknown' }
      if (row.expires <= now) return { kind: 'expired' }
      return { kind: 'valid', member: row.member }
    },

    /**
     * Binds a Telegram chat to a person: replaces the person's earlier link, and refuses ('taken') a
     * Telegram chat linked to someone else. The primary key and the unique index decide between
     * parallel binds, so the outcome holds under any concurrency. Notifications start off.
     */
    async bind(member: number, telegramChatId: number, telegramName: string, now: number): Promise<BindResult> {
      const before = await db
        .selectFrom('telegram_links')
        .select('member')
        .where('member', '=', member)
        .executeTakeFirst()
      try {
        await db
          .insertInto('telegram_links')
          .values({
            member,
            telegram_chat_id: telegramChatId,
            telegram_name: telegramName,
            notify: writeBool(false),
            linked: now,
          })
          .onConflict((conflict) =>
            conflict
              .column('member')
              .doUpdateSet({ telegram_chat_id: telegramChatId, telegram_name: telegramName, linked: now }),
          )
          .execute()
      } catch (error) {
        if (isUniqueViolation(error)) return { kind: 'taken' }
        throw error
      }
      return { kind: 'linked', replaced: before !== undefined }
    },

    /** Removes a person's link; true when there was one. */
    async unlink(member: number): Promise<boolean> {
      const result = await db.deleteFrom('telegram_links').where('member', '=', member).executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },

    /** Removes the link of a Telegram chat (the user blocked the bot); the person it was, or undefined. */
    async unlinkChat(telegramChatId: number): Promise<number | undefined> {
      const row = await db
        .deleteFrom('telegram_links')
        .where('telegram_chat_id', '=', telegramChatId)
        .returning('member')
        .executeTakeFirst()
      return row?.member
    },

    /** Turns chat notifications on or off; false when the person has no link. */
    async setNotify(member: number, notify: boolean): Promise<boolean> {
      const result = await db
        .updateTable('telegram_links')
        .set({ notify: writeBool(notify) })
        .where('member', '=', member)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
  }
}

export type TelegramRepository = ReturnType<typeof createTelegramRepository>
