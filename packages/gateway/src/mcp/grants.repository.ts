import { ApiError, type TimetickGenerator } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { Caller } from '../auth/caller.ts'
import type { GatewayDatabase, McpGrantsTable } from '../db/schema.ts'

export type McpGrant = McpGrantsTable

/** Who a grant is for: a user (CRM id), an app, or one API key. */
export type SubjectKind = 'user' | 'app' | 'key'
export const SUBJECT_KINDS: readonly SubjectKind[] = ['user', 'app', 'key']

export interface Subject {
  kind: SubjectKind
  id: number
}

/** The subjects whose grants a caller has: its user, its app, its API key (those it has). */
export function subjectsOf(caller: Caller): Subject[] {
  const subjects: Subject[] = []
  if (caller.crmId > 0) subjects.push({ kind: 'user', id: caller.crmId })
  if (caller.appId > 0) subjects.push({ kind: 'app', id: caller.appId })
  if (caller.apiKeyId > 0) subjects.push({ kind: 'key', id: caller.apiKeyId })
  return subjects
}

export interface NewGrant {
  subject: Subject
  tool: string
  /** wallet_send only: the one currency the grant covers ('' for any). */
  currency: string
  /** Hundredths of the currency; 0 for no limit. */
  perCall: number
  perDay: number
}

/** A wallet_send about to go out: who sends, under which key, what. */
export interface SendReservation {
  crmId: number
  idempotencyKey: string
  argsDigest: string
  currency: string
  /** Hundredths. */
  amount: number
  /** The caller's grants for wallet_send in this currency (from `sendGrants`). */
  grants: McpGrant[]
}

/**
 * Days the sends by idempotency key and the day counters are kept. The limits need only today's;
 * a replay of a send whose record is gone is counted again (never less), and the wallet still
 * sends once.
 */
export const SEND_RECORDS_KEPT_DAYS = 7

/** The UTC day of a time, as the per-day limits count it. */
export function utcDay(time: number): string {
  return new Date(time).toISOString().slice(0, 10)
}

function subjectName(subject: { subject_kind: string; subject_id: number }): string {
  return `${subject.subject_kind}:${subject.subject_id}`
}

/** Hundredths as a decimal amount for messages. */
function amountText(hundredths: number): string {
  return (hundredths / 100).toFixed(2)
}

/**
 * The MCP whitelist (docs/mcp.md): tools granted to users, apps and keys, and the wallet_send
 * limits with what was spent against them. Deny by default: a caller may use only the tools
 * granted to one of its subjects.
 */
export function createMcpGrants(db: Kysely<GatewayDatabase>, nextTick: TimetickGenerator, now: () => number) {
  function ofSubjects(subjects: Subject[]) {
    return db
      .selectFrom('mcp_grants')
      .selectAll()
      .where((eb) =>
        eb.or(
          subjects.map((subject) => eb.and([eb('subject_kind', '=', subject.kind), eb('subject_id', '=', subject.id)])),
        ),
      )
  }

  return {
    /** Grants a tool to a subject, or changes the currency limits of an existing grant. */
    async allow(grant: NewGrant): Promise<McpGrant> {
      const row: McpGrant = {
        id: nextTick(),
        subject_kind: grant.subject.kind,
        subject_id: grant.subject.id,
        tool: grant.tool,
        currency: grant.currency,
        per_call: grant.perCall,
        per_day: grant.perDay,
        created: now(),
      }
      await db
        .insertInto('mcp_grants')
        .values(row)
        .onConflict((conflict) =>
          conflict
            .columns(['subject_kind', 'subject_id', 'tool', 'currency'])
            .doUpdateSet({ per_call: grant.perCall, per_day: grant.perDay }),
        )
        .execute()
      return db
        .selectFrom('mcp_grants')
        .selectAll()
        .where('subject_kind', '=', row.subject_kind)
        .where('subject_id', '=', row.subject_id)
        .where('tool', '=', row.tool)
        .where('currency', '=', row.currency)
        .executeTakeFirstOrThrow()
    },

    /** Removes a subject's grants of a tool (all currencies, or only `currency`); the number removed. */
    async deny(subject: Subject, tool: string, currency?: string): Promise<number> {
      let query = db
        .deleteFrom('mcp_grants')
        .where('subject_kind', '=', subject.kind)
        .where('subject_id', '=', subject.id)
        .where('tool', '=', tool)
      if (currency !== undefined) query = query.where('currency', '=', currency)
      const result = await query.executeTakeFirst()
      return Number(result.numDeletedRows)
    },

    /** Every grant, or a subject's. */
    async list(subject?: Subject): Promise<McpGrant[]> {
      const query = subject ? ofSubjects([subject]) : db.selectFrom('mcp_grants').selectAll()
      return query.orderBy('subject_kind').orderBy('subject_id').orderBy('tool').orderBy('currency').execute()
    },

    /** The names of the tools granted to any of the subjects. */
    async toolsOf(subjects: Subject[]): Promise<Set<string>> {
      if (subjects.length === 0) return new Set()
      const rows = await ofSubjects(subjects).execute()
      return new Set(rows.map((row) => row.tool))
    },

    /** The subjects' grants of wallet_send that cover `currency` (for any currency, or this one). */
    async sendGrants(subjects: Subject[], currency: string): Promise<McpGrant[]> {
      if (subjects.length === 0) return []
      return ofSubjects(subjects).where('tool', '=', 'wallet_send').where('currency', 'in', ['', currency]).execute()
    },

    /**
     * Checks a send against every per-call limit and counts it against every per-day limit of the
     * grants, in one transaction: the counters are raised by a conditional upsert, which the
     * database serialises per counter row, so parallel sends never take a day over its limit.
     * A send under an idempotency key already counted (a replay) is not counted again; the same
     * key with other arguments is refused. Answers whether it was a replay.
     */
    async reserveSend(send: SendReservation): Promise<{ replay: boolean }> {
      for (const grant of send.grants) {
        if (grant.per_call > 0 && send.amount > grant.per_call) {
          throw new ApiError(
            'McpPerCallLimit',
            `${amountText(send.amount)} ${send.currency} is above the per-call limit of ${amountText(grant.per_call)} ${send.currency} (${subjectName(grant)})`,
          )
        }
      }
      const day = utcDay(now())
      const limited = send.grants.filter((grant) => grant.per_day > 0)
      return db.transaction().execute(async (trx) => {
        const inserted = await trx
          .insertInto('mcp_sends')
          .values({
            id: nextTick(),
            crm_id: send.crmId,
            idempotency_key: send.idempotencyKey,
            args_digest: send.argsDigest,
            currency: send.currency,
            amount: send.amount,
            day,
            counted: JSON.stringify(limited.map(subjectName)),
            created: now(),
          })
          .onConflict((conflict) => conflict.columns(['crm_id', 'idempotency_key']).doNothing())
          .returning('id')
          .executeTakeFirst()
        if (!inserted) {
          const earlier = await trx
            .selectFrom('mcp_sends')
            .select('args_digest')
            .where('crm_id', '=', send.crmId)
            .where('idempotency_key', '=', send.idempotencyKey)
            .executeTakeFirst()
          if (!earlier) throw new ApiError('Conflict', 'a call with this idempotency key just ended; try again')
          if (earlier.args_digest !== send.argsDigest) {
            throw new ApiError('McpIdempotencyConflict', 'this idempotency key was already used with other arguments')
          }
          return { replay: true }
        }
        for (const grant of limited) {
          const over = new ApiError(
            'McpPerDayLimit',
            `${amountText(send.amount)} ${send.currency} would go over the per-day limit of ${amountText(grant.per_day)} ${send.currency} (${subjectName(grant)}, UTC day ${day})`,
          )
          if (send.amount > grant.per_day) throw over
          const counted = await trx
            .insertInto('mcp_spend')
            .values({
              subject_kind: grant.subject_kind,
              subject_id: grant.subject_id,
              currency: send.currency,
              day,
              spent: send.amount,
            })
            .onConflict((conflict) =>
              conflict
                .columns(['subject_kind', 'subject_id', 'currency', 'day'])
                .doUpdateSet((eb) => ({ spent: eb('mcp_spend.spent', '+', send.amount) }))
                .where('mcp_spend.spent', '<=', grant.per_day - send.amount),
            )
            .returning('spent')
            .executeTakeFirst()
          if (!counted) throw over
        }
        return { replay: false }
      })
    },

    /** Takes back a counted send the wallet refused (nothing moved), so it does not use up the day. */
    async releaseSend(crmId: number, idempotencyKey: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const send = await trx
          .deleteFrom('mcp_sends')
          .where('crm_id', '=', crmId)
          .where('idempotency_key', '=', idempotencyKey)
          .returning(['currency', 'amount', 'day', 'counted'])
          .executeTakeFirst()
        if (!send) return
        for (const name of JSON.parse(send.counted) as string[]) {
          const [kind = '', id = '0'] = name.split(':')
          await trx
            .updateTable('mcp_spend')
            .set((eb) => ({ spent: eb('spent', '-', send.amount) }))
            .where('subject_kind', '=', kind)
            .where('subject_id', '=', Number(id))
            .where('currency', '=', send.currency)
            .where('day', '=', send.day)
            .execute()
        }
      })
    },

    /** Deletes the send records and day counters older than SEND_RECORDS_KEPT_DAYS. */
    async sweep(): Promise<void> {
      const before = now() - SEND_RECORDS_KEPT_DAYS * 86_400_000
      await db.deleteFrom('mcp_sends').where('created', '<', before).execute()
      await db.deleteFrom('mcp_spend').where('day', '<', utcDay(before)).execute()
    },

    /** What a subject's wallet_send moved in a currency on a UTC day, in hundredths. */
    async spent(subject: Subject, currency: string, day: string): Promise<number> {
      const row = await db
        .selectFrom('mcp_spend')
        .select('spent')
        .where('subject_kind', '=', subject.kind)
        .where('subject_id', '=', subject.id)
        .where('currency', '=', currency)
        .where('day', '=', day)
        .executeTakeFirst()
      return row ? Number(row.spent) : 0
    },

    /** What a subject's wallet_send moved on a UTC day, per currency (hundredths), as counted for per-day limits. */
    async spentOn(subject: Subject, day: string): Promise<{ currency: string; spent: number }[]> {
      const rows = await db
        .selectFrom('mcp_spend')
        .select(['currency', 'spent'])
        .where('subject_kind', '=', subject.kind)
        .where('subject_id', '=', subject.id)
        .where('day', '=', day)
        .orderBy('currency')
        .execute()
      return rows.map((row) => ({ currency: row.currency, spent: Number(row.spent) }))
    },
  }
}

export type McpGrants = ReturnType<typeof createMcpGrants>
