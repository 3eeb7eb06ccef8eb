import { ApiError } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { ChatDatabase } from '../../db/schema.ts'
import type { WidgetInput } from './widgets.ts'

/** A custom widget as stored, with who changed it last and when. */
export interface CustomWidget extends WidgetInput {
  updatedBy: number
  timetickUpdate: number
}

/** A live widget message in one Telegram chat. */
export interface WidgetView {
  telegramChatId: number
  member: number
  widget: string
  messageId: number
  liveUntil: number
  nextRefresh: number
}

/** Tries of a replacement whose compare-and-set lost to another at once (each loss is another's win). */
const PUT_ATTEMPTS = 20

function toWidget(row: ChatDatabase['telegram_widgets']): CustomWidget {
  return {
    name: row.name,
    title: row.title,
    template: row.template,
    scope: row.scope,
    refreshSeconds: row.refresh_seconds,
    updatedBy: Number(row.updated_by),
    timetickUpdate: Number(row.timetick_update),
  }
}

function toView(row: ChatDatabase['telegram_widget_views']): WidgetView {
  return {
    telegramChatId: Number(row.telegram_chat_id),
    member: Number(row.member),
    widget: row.widget,
    messageId: Number(row.message_id),
    liveUntil: Number(row.live_until),
    nextRefresh: Number(row.next_refresh),
  }
}

// PostgreSQL's unique_violation, or SQLite's constraint message.
function isUniqueViolation(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown }
  return code === '23505' || (typeof message === 'string' && message.includes('UNIQUE constraint failed'))
}

/** All SQL of the telegram_widgets and telegram_widget_views tables. */
export function createWidgetsRepository(db: Kysely<ChatDatabase>) {
  return {
    /** Every custom widget, by name. */
    async list(): Promise<CustomWidget[]> {
      return (await db.selectFrom('telegram_widgets').selectAll().orderBy('name').execute()).map(toWidget)
    },

    async find(name: string): Promise<CustomWidget | undefined> {
      const row = await db.selectFrom('telegram_widgets').selectAll().where('name', '=', name).executeTakeFirst()
      return row && toWidget(row)
    },

    /** Stores a new widget; the primary key keeps one widget per name under parallel creates. */
    async create(widget: WidgetInput, by: number, tick: number): Promise<void> {
      try {
        await db
          .insertInto('telegram_widgets')
          .values({
            name: widget.name,
            title: widget.title,
            template: widget.template,
            scope: widget.scope,
            refresh_seconds: widget.refreshSeconds,
            updated_by: by,
            timetick_update: tick,
          })
          .execute()
      } catch (error) {
        if (isUniqueViolation(error)) throw new ApiError('WidgetNameTaken', `A widget named ${widget.name} exists.`)
        throw error
      }
    },

    /** Changes a widget's title, template, scope and interval; false when there is none of that name. */
    async update(widget: WidgetInput, by: number, tick: number): Promise<boolean> {
      const result = await db
        .updateTable('telegram_widgets')
        .set({
          title: widget.title,
          template: widget.template,
          scope: widget.scope,
          refresh_seconds: widget.refreshSeconds,
          updated_by: by,
          timetick_update: tick,
        })
        .where('name', '=', widget.name)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },

    /** Deletes a widget; false when there was none. Its live messages stop at their next refresh. */
    async remove(name: string): Promise<boolean> {
      const result = await db.deleteFrom('telegram_widgets').where('name', '=', name).executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },

    /**
     * Makes `view` the live widget of its Telegram chat; returns the one it replaces. A
     * compare-and-set on the chat's row: of two replacing at once (on two chat instances), each
     * learns the view it replaced, so no message stays live without its last edit saying so.
     */
    async putView(view: WidgetView): Promise<WidgetView | undefined> {
      const values = {
        member: view.member,
        widget: view.widget,
        message_id: view.messageId,
        live_until: view.liveUntil,
        next_refresh: view.nextRefresh,
      }
      for (let attempt = 0; attempt < PUT_ATTEMPTS; attempt++) {
        const before = await db
          .selectFrom('telegram_widget_views')
          .selectAll()
          .where('telegram_chat_id', '=', view.telegramChatId)
          .executeTakeFirst()
        if (before) {
          const updated = await db
            .updateTable('telegram_widget_views')
            .set(values)
            .where('telegram_chat_id', '=', view.telegramChatId)
            .where('message_id', '=', before.message_id)
            .executeTakeFirst()
          if (Number(updated.numUpdatedRows) > 0) {
            return Number(before.message_id) !== view.messageId ? toView(before) : undefined
          }
        } else {
          const inserted = await db
            .insertInto('telegram_widget_views')
            .values({ telegram_chat_id: view.telegramChatId, ...values })
            .onConflict((conflict) => conflict.column('telegram_chat_id').doNothing())
            .executeTakeFirst()
          if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return undefined
        }
      }
      throw new Error(`the live widget of Telegram chat ${view.telegramChatId} kept changing; not replaced`)
    },

    /**
     * Takes a due view for one refresh: moves its next refresh to `until` unless another chat
     * instance took it first (or a newer message replaced it), so each is edited once however many
     * instances refresh. A refresher that dies holding it leaves it due again at `until`.
     */
    async claim(view: WidgetView, until: number): Promise<boolean> {
      const result = await db
        .updateTable('telegram_widget_views')
        .set({ next_refresh: until })
        .where('telegram_chat_id', '=', view.telegramChatId)
        .where('message_id', '=', view.messageId)
        .where('next_refresh', '=', view.nextRefresh)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },

    /** Live views whose refresh is due at `now`, soonest first. */
    async due(now: number, limit: number): Promise<WidgetView[]> {
      const rows = await db
        .selectFrom('telegram_widget_views')
        .selectAll()
        .where('next_refresh', '<=', now)
        .orderBy('next_refresh')
        .limit(limit)
        .execute()
      return rows.map(toView)
    },

    /** Sets the next refresh of a view, unless another message replaced it meanwhile. */
    async reschedule(view: WidgetView, nextRefresh: number): Promise<void> {
      await db
        .updateTable('telegram_widget_views')
        .set({ next_refresh: nextRefresh })
        .where('telegram_chat_id', '=', view.telegramChatId)
        .where('message_id', '=', view.messageId)
        .execute()
    },

    /** Ends a view, unless another message replaced it meanwhile. */
    async endView(view: WidgetView): Promise<void> {
      await db
        .deleteFrom('telegram_widget_views')
        .where('telegram_chat_id', '=', view.telegramChatId)
        .where('message_id', '=', view.messageId)
        .execute()
    },

    /** The live view of a Telegram chat, if any. */
    async viewOf(telegramChatId: number): Promise<WidgetView | undefined> {
      const row = await db
        .selectFrom('telegram_widget_views')
        .selectAll()
        .where('telegram_chat_id', '=', telegramChatId)
        .executeTakeFirst()
      return row && toView(row)
    },
  }
}

export type WidgetsRepository = ReturnType<typeof createWidgetsRepository>
