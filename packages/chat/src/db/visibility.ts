import { ChatMessFlags, LinkKind } from '@atrium/platform'
import { type RawBuilder, sql } from 'kysely'

/** Flags of rows the regular feed never shows: soft-deleted rows and hidden widget commands. */
export const HIDDEN_FLAGS = ChatMessFlags.Deleted | ChatMessFlags.WidgetCommand

/**
 * The feed's visibility test on chat_mess, exactly as the partial index chat_mess_visible states it
 * (literals, not parameters), so that queries using it can use that index. Reactions are shown
 * aggregated under their target, not as rows of their own.
 */
export function isVisible(): RawBuilder<boolean> {
  return sql<boolean>`(flags & ${sql.lit(HIDDEN_FLAGS)}) = 0 AND link_kind <> ${sql.lit(LinkKind.Reaction)}`
}

/**
 * A live (not soft-deleted) reaction row, exactly as the unique partial index chat_mess_one_reaction
 * (migration 0009) states it, so an insert's ON CONFLICT target can name that index on both dialects.
 */
export function isLiveReaction(): RawBuilder<boolean> {
  return sql<boolean>`link_kind = ${sql.lit(LinkKind.Reaction)} AND (flags & ${sql.lit(ChatMessFlags.Deleted)}) = 0`
}
