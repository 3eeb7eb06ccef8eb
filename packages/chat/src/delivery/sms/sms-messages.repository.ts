import type { Kysely } from 'kysely'
import type { ChatDatabase, SmsMessagesTable } from '../../db/schema.ts'
import { SMS_STATUS_RANK, type StatusReport } from './sms-provider.ts'
import type { SmsProviderName } from './sms-settings.ts'

/** A sent SMS as first recorded. */
export interface SentSms {
  timetick: number
  provider: SmsProviderName
  messageId: string
  toMasked: string
  crmId: number
}

/** Sent SMS and their delivery statuses (table sms_messages). */
export function createSmsMessagesRepository(db: Kysely<ChatDatabase>) {
  return {
    /** Records a message the provider accepted, as queued; an id already recorded is kept as it is. */
    async record({ timetick, provider, messageId, toMasked, crmId }: SentSms): Promise<void> {
      await db
        .insertInto('sms_messages')
        .values({
          timetick,
          timetick_update: timetick,
          provider,
          message_id: messageId,
          to_masked: toMasked,
          crm_id: crmId,
          status: 'queued',
          status_rank: SMS_STATUS_RANK.queued,
          provider_status: '',
          error_code: '',
        })
        // One row per provider message, held by the unique index: a provider repeating an id
        // (or a retried send it deduplicated) keeps the first record.
        .onConflict((conflict) => conflict.columns(['provider', 'message_id']).doNothing())
        .execute()
    },

    /**
     * Applies a callback's report to the message it names. A status never moves backwards (reports
     * arrive out of order, and a replayed one changes nothing); a final status may be corrected by
     * another final one. Returns whether a row changed.
     */
    async applyReport(provider: SmsProviderName, report: StatusReport, tick: number): Promise<boolean> {
      const rank = SMS_STATUS_RANK[report.status]
      let update = db
        .updateTable('sms_messages')
        .set({
          status: report.status,
          status_rank: rank,
          provider_status: report.providerStatus,
          error_code: report.errorCode,
          timetick_update: tick,
        })
        .where('provider', '=', provider)
        .where('message_id', '=', report.messageId)
        .where('status_rank', '<=', rank)
      if (report.reference !== undefined) update = update.where('timetick', '=', Number(report.reference))
      const result = await update.executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },

    async find(provider: SmsProviderName, messageId: string): Promise<SmsMessagesTable | undefined> {
      return db
        .selectFrom('sms_messages')
        .selectAll()
        .where('provider', '=', provider)
        .where('message_id', '=', messageId)
        .executeTakeFirst()
    },
  }
}

export type SmsMessagesRepository = ReturnType<typeof createSmsMessagesRepository>
