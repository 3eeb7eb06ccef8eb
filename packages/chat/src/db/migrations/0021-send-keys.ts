import { ChatType, columnType as c, type DatabaseDialect, notNullDefault as d, MemberRole } from '@atrium/platform'
import { type Kysely, sql } from 'kysely'
import { SEQUENCER_LOCK } from '../../events/event-feed.ts'

/**
 * Idempotency keys of send_message (docs/chat-api.md, "Sending once"): one row per sender and key,
 * stored in the transaction that posts the message. The primary key is what makes a key post at
 * most once when a client sends again after losing an answer (issue 22: a chat instance that dies
 * mid-send behind the gateway).
 *
 * PostgreSQL: chat_post_messages (migrations 0005 and 0007) takes a key, fingerprint and answer
 * per message, so keyed sends keep the batched path (messages/direct-post.ts). A keyed message is
 * posted there only when its key is new: none stored for the sender, and no earlier message of the
 * batch with it; the others are left to the ordinary path, which answers the stored message. A key
 * that another transaction stores meanwhile fails the whole statement on the primary key, and
 * every send of the batch takes the ordinary path. Everything else is as in 0007.
 */
export async function up(db: Kysely<unknown>, dialect: DatabaseDialect): Promise<void> {
  await db.schema
    .createTable('send_keys')
    .addColumn('member', c.id, d(0))
    .addColumn('idem_key', c.text, d(''))
    .addColumn('fingerprint', c.text, d(''))
    .addColumn('message_id', c.id, d(0))
    .addColumn('response', c.json, d('{}'))
    .addColumn('created', c.time, d(0))
    .addPrimaryKeyConstraint('send_keys_pk', ['member', 'idem_key'])
    .execute()
  await db.schema.createIndex('send_keys_created').on('send_keys').column('created').execute()
  if (dialect !== 'postgres') return

  const lock = sql.lit(SEQUENCER_LOCK)
  const admin = sql.lit(MemberRole.Owner | MemberRole.Admin)
  await sql`DROP FUNCTION chat_post_messages(bigint[], bigint[], bigint[], text[], text[], bigint[], integer[],
    bigint[], integer[], bigint[], bigint[], text[], bigint)`.execute(db)
  await sql`CREATE FUNCTION chat_post_messages(
      ids bigint[], chat_ids bigint[], owners bigint[], contents text[], file_names text[], file_sizes bigint[],
      flag_sets integer[], linked_ids bigint[], link_kinds integer[], forwarded bigint[],
      event_ids bigint[], event_data text[], base bigint,
      idem_keys text[], fingerprints text[], responses text[], keyed_at bigint
    ) RETURNS SETOF bigint
    LANGUAGE plpgsql VOLATILE AS $$
    DECLARE
      posted bigint[];
      posted_chats bigint[];
      posted_owners bigint[];
      events bigint[];
      event_chats bigint[];
      event_apps bigint[];
      event_texts text[];
    BEGIN
      -- The inserts first: they conflict with nobody (but a key stored meanwhile), so concurrent calls overlap here.
      WITH input AS (
        SELECT * FROM unnest(ids, chat_ids, owners, contents, file_names, file_sizes, flag_sets, linked_ids,
          link_kinds, forwarded, event_ids, event_data, idem_keys, fingerprints, responses)
          AS i (id, chat_id, owner, content, file_name, file_size, flags, linked_id, link_kind, forwarded_from,
            event_id, data, idem_key, fingerprint, response)
      ), allowed AS (
        SELECT i.*, c.app_id FROM input i
        JOIN chats c ON c.timetick = i.chat_id
        JOIN chat_members m ON m.chat_id = i.chat_id AND m.member = i.owner
        WHERE c.archived = 0 AND (c.type <> ${sql.lit(ChatType.InfoChannel)} OR (m.role & ${admin}) <> 0)
          AND (i.idem_key = '' OR (
            NOT EXISTS (SELECT 1 FROM send_keys k WHERE k.member = i.owner AND k.idem_key = i.idem_key)
            AND NOT EXISTS (SELECT 1 FROM input j WHERE j.owner = i.owner AND j.idem_key = i.idem_key AND j.id < i.id)))
      ), keyed AS (
        INSERT INTO send_keys (member, idem_key, fingerprint, message_id, response, created)
        SELECT owner, idem_key, fingerprint, id, response, keyed_at FROM allowed WHERE idem_key <> ''
      ), message AS (
        INSERT INTO chat_mess (timetick, timetick_update, chat_id, owner, content, file_name, file_size, flags,
          linked_message_id, link_kind, forwarded_from, edited)
        SELECT id, id, chat_id, owner, content, file_name, file_size, flags, linked_id, link_kind, forwarded_from, 0
        FROM allowed
        RETURNING timetick, chat_id, owner
      )
      SELECT array_agg(timetick), array_agg(chat_id), array_agg(owner),
        (SELECT array_agg(event_id ORDER BY event_id) FROM allowed),
        (SELECT array_agg(chat_id ORDER BY event_id) FROM allowed),
        (SELECT array_agg(app_id ORDER BY event_id) FROM allowed),
        (SELECT array_agg(data ORDER BY event_id) FROM allowed)
      INTO posted, posted_chats, posted_owners, events, event_chats, event_apps, event_texts FROM message;
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
      -- Last, and held only through the commit: the sequencer's lock, then these events with their
      -- ticks, in event id order (the arrays are sorted by it).
      PERFORM pg_advisory_xact_lock(${lock});
      INSERT INTO chat_events (timetick, tick_update, chat_id, addressee, app_id, event_type, data)
      SELECT e.id, head.first + e.n - 1, e.chat_id, 0, e.app_id, 'NewChatMessage', e.data
      FROM unnest(events, event_chats, event_apps, event_texts) WITH ORDINALITY AS e (id, chat_id, app_id, data, n),
        (SELECT greatest(base, coalesce(max(tick_update), 0) + 1) AS first FROM chat_events) AS head;
      RETURN QUERY SELECT unnest(posted);
    END $$`.execute(db)
}
