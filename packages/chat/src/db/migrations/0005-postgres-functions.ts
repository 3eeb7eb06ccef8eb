import { ChatType, type DatabaseDialect, MemberRole } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'
import { SEQUENCER_LOCK } from '../../events/event-feed.ts'
import { HIDDEN_FLAGS } from '../visibility.ts'

/**
 * PostgreSQL: two functions that save round trips and commits on the write path. Both are
 * VOLATILE plpgsql, so each statement after pg_advisory_xact_lock takes a fresh snapshot and sees
 * every row that earlier holders of the lock committed; the lock is released only after the
 * transaction's commit is visible, so ticks given under it are above every cursor a reader saw.
 *
 * chat_sequence_events: the event sequencer in one call instead of six round trips (BEGIN, the lock,
 * two reads, the update, COMMIT): committed unsequenced rows get increasing ticks above both the
 * head and `base` (the caller's clock), in timetick order.
 *
 * chat_post_messages: new messages of many senders in one call and one commit (messages/direct-post.ts).
 * For each input row whose sender may post there (a member, the chat not archived, an admin in an
 * info channel) it inserts the message, moves the chat's newest message and the sender's read
 * marker forward, and inserts the NewChatMessage event with the chat's app id; then it takes the
 * sequencer's lock and sequences those events itself, so they need no sequencer run after the
 * commit. Returns the ids of the messages it inserted. A call that fails wrote nothing.
 *
 * chat_search_recent: the newest visible messages of a member's chats whose content matches every
 * ILIKE pattern, found by walking each chat newest first (chat_mess_chat) and stopping at `wanted`
 * matches or after `budget` rows: a common word is found in the newest few rows, where the planner
 * would otherwise read every row of the chats, or every trigram match in the table, and sort them.
 * When a chat's walk stopped at the budget and its unread older rows could belong in the answer,
 * the answer is not known to be exact: the function then returns a single row with timetick 0, and
 * the caller searches without a budget (search/search.repository.ts).
 */
export async function up(db: Kysely<unknown>, dialect: DatabaseDialect): Promise<void> {
  if (dialect !== 'postgres') return
  const lock = sql.lit(SEQUENCER_LOCK)
  await sql`CREATE FUNCTION chat_sequence_events(base bigint, batch integer) RETURNS integer
    LANGUAGE plpgsql VOLATILE AS $$
    DECLARE
      sequenced integer;
    BEGIN
      PERFORM pg_advisory_xact_lock(${lock});
      WITH pending AS (
        SELECT timetick, row_number() OVER (ORDER BY timetick) AS n
        FROM (SELECT timetick FROM chat_events WHERE tick_update = 0 ORDER BY timetick LIMIT batch) AS p
      ), head AS (
        SELECT greatest(base, coalesce(max(tick_update), 0) + 1) AS first FROM chat_events
      )
      UPDATE chat_events e SET tick_update = head.first + pending.n - 1
      FROM pending, head WHERE e.timetick = pending.timetick;
      GET DIAGNOSTICS sequenced = ROW_COUNT;
      RETURN sequenced;
    END $$`.execute(db)

  const admin = sql.lit(MemberRole.Owner | MemberRole.Admin)
  await sql`CREATE FUNCTION chat_post_messages(
      ids bigint[], chat_ids bigint[], owners bigint[], contents text[], file_names text[], file_sizes bigint[],
      flag_sets integer[], linked_ids bigint[], link_kinds integer[], forwarded bigint[],
      event_ids bigint[], event_data text[], base bigint
    ) RETURNS SETOF bigint
    LANGUAGE plpgsql VOLATILE AS $$
    DECLARE
      posted bigint[];
      posted_chats bigint[];
      posted_owners bigint[];
      events bigint[];
    BEGIN
      -- The inserts first: they conflict with nobody, so concurrent calls overlap here.
      WITH input AS (
        SELECT * FROM unnest(ids, chat_ids, owners, contents, file_names, file_sizes, flag_sets, linked_ids,
          link_kinds, forwarded, event_ids, event_data)
          AS i (id, chat_id, owner, content, file_name, file_size, flags, linked_id, link_kind, forwarded_from,
            event_id, data)
      ), allowed AS (
        SELECT i.*, c.app_id FROM input i
        JOIN chats c ON c.timetick = i.chat_id
        JOIN chat_members m ON m.chat_id = i.chat_id AND m.member = i.owner
        WHERE c.archived = 0 AND (c.type <> ${sql.lit(ChatType.InfoChannel)} OR (m.role & ${admin}) <> 0)
      ), message AS (
        INSERT INTO chat_mess (timetick, timetick_update, chat_id, owner, content, file_name, file_size, flags,
          linked_message_id, link_kind, forwarded_from, edited)
        SELECT id, id, chat_id, owner, content, file_name, file_size, flags, linked_id, link_kind, forwarded_from, 0
        FROM allowed
        RETURNING timetick, chat_id, owner
      ), event AS (
        INSERT INTO chat_events (timetick, tick_update, chat_id, addressee, app_id, event_type, data)
        SELECT event_id, 0, chat_id, 0, app_id, 'NewChatMessage', data FROM allowed
        RETURNING timetick
      )
      SELECT array_agg(timetick), array_agg(chat_id), array_agg(owner), (SELECT array_agg(timetick) FROM event)
      INTO posted, posted_chats, posted_owners, events FROM message;
      IF posted IS NULL THEN
        RETURN;
      END IF;
      -- Row locks in key order, chats before members as the other writers take them, so that
      -- concurrent calls wait for each other instead of deadlocking.
      PERFORM 1 FROM chats WHERE timetick = ANY (posted_chats) ORDER BY timetick FOR UPDATE;
      UPDATE chats SET last_message = n.newest, timetick_update = n.newest
      FROM (SELECT chat_id, max(id) AS newest FROM unnest(posted_chats, posted) AS p (chat_id, id) GROUP BY chat_id) n
      WHERE chats.timetick = n.chat_id AND chats.last_message < n.newest;
      PERFORM 1 FROM chat_members m
      JOIN (SELECT DISTINCT chat_id, owner FROM unnest(posted_chats, posted_owners) AS p (chat_id, owner)) p
        ON m.chat_id = p.chat_id AND m.member = p.owner
      ORDER BY m.chat_id, m.member FOR UPDATE OF m;
      UPDATE chat_members SET last_read = n.newest, timetick_update = n.newest
      FROM (SELECT chat_id, owner, max(id) AS newest FROM unnest(posted_chats, posted_owners, posted) AS p (chat_id, owner, id)
        GROUP BY chat_id, owner) n
      WHERE chat_members.chat_id = n.chat_id AND chat_members.member = n.owner AND chat_members.last_read < n.newest;
      -- Last, and held only through the commit: the sequencer's lock, then these events' ticks.
      PERFORM pg_advisory_xact_lock(${lock});
      WITH pending AS (
        SELECT t, row_number() OVER (ORDER BY t) AS n FROM unnest(events) AS t
      ), head AS (
        SELECT greatest(base, coalesce(max(tick_update), 0) + 1) AS first FROM chat_events
      )
      UPDATE chat_events e SET tick_update = head.first + pending.n - 1
      FROM pending, head WHERE e.timetick = pending.t;
      RETURN QUERY SELECT unnest(posted);
    END $$`.execute(db)

  await sql`CREATE FUNCTION chat_search_recent(
      searcher bigint, only_chat bigint, patterns text[], before bigint, wanted integer, budget integer
    ) RETURNS SETOF chat_mess
    LANGUAGE plpgsql STABLE
    SET enable_bitmapscan = off SET jit = off SET plan_cache_mode = force_generic_plan AS $$
    DECLARE
      chat bigint;
      matched chat_mess[];
      hits chat_mess[] := '{}';
      oldest_read bigint;
      -- The newest row that some chat's walk read last before its budget ran out.
      edge bigint;
      marker chat_mess;
    BEGIN
      FOR chat IN SELECT chat_id FROM chat_members WHERE member = searcher AND (only_chat = 0 OR chat_id = only_chat) LOOP
        matched := ARRAY(
          SELECT w::chat_mess FROM (
            SELECT * FROM chat_mess WHERE chat_id = chat AND timetick < before ORDER BY timetick DESC LIMIT budget
          ) AS w
          WHERE (w.flags & ${sql.lit(HIDDEN_FLAGS)}) = 0 AND w.content ILIKE ALL (patterns)
          LIMIT wanted);
        hits := hits || matched;
        IF cardinality(matched) < wanted THEN
          SELECT timetick INTO oldest_read FROM chat_mess WHERE chat_id = chat AND timetick < before
          ORDER BY timetick DESC OFFSET budget - 1 LIMIT 1;
          IF FOUND THEN
            edge := greatest(edge, oldest_read);
          END IF;
        END IF;
      END LOOP;
      hits := ARRAY(SELECT h FROM unnest(hits) AS h ORDER BY h.timetick DESC LIMIT wanted);
      IF edge IS NOT NULL AND (cardinality(hits) < wanted OR (hits[wanted]).timetick < edge) THEN
        marker.timetick := 0;
        RETURN NEXT marker;
        RETURN;
      END IF;
      RETURN QUERY SELECT * FROM unnest(hits);
    END $$`.execute(db)
}
