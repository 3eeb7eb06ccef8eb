import type { Service } from '@atrium/platform'
import { Type } from 'typebox'
import { requireScope } from '../auth/caller.ts'
import type { LoginAudit, LoginAuditRow } from './login-audit.repository.ts'

export interface LoginAuditPluginOptions {
  loginAudit: LoginAudit
  /** Audit.DefaultLimit and Audit.MaxLimit. */
  defaultLimit: number
  maxLimit: number
}

/** The scope that may read the login audit log. */
export const AUDIT_SCOPE = 'admin'

const Id = Type.String({ pattern: '^[1-9][0-9]{0,15}$' })
const Time = Type.Integer({ minimum: 0, description: 'Epoch milliseconds.' })

const AuditEntry = Type.Object({
  id: Type.String(),
  crmId: Type.String(),
  appId: Type.String(),
  method: Type.String({
    description: 'email_otp_start, email_otp, magic_link, phone_otp_start, phone_otp, app_login, user_key.',
  }),
  success: Type.Boolean(),
  reason: Type.String({ description: 'Why it failed, empty on success.' }),
  ip: Type.String(),
  country: Type.String({ description: 'ISO 3166 code from the IP address; empty when unknown.' }),
  userAgent: Type.String(),
  screen: Type.String(),
  deviceGuid: Type.String(),
  timezone: Type.String(),
  language: Type.String(),
  created: Type.Integer(),
})

function auditQuery(maxLimit: number) {
  return {
    querystring: Type.Object(
      {
        crmId: Type.Optional(Id),
        ip: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        from: Type.Optional(Time),
        to: Type.Optional(Time),
        before: Type.Optional(Id),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxLimit })),
      },
      { additionalProperties: false },
    ),
    response: {
      200: Type.Object({
        entries: Type.Array(AuditEntry),
        next: Type.String({ description: 'Pass as `before` for older entries; empty at the end.' }),
      }),
    },
  }
}

function toAuditEntry(row: LoginAuditRow) {
  return {
    id: String(row.id),
    crmId: String(row.crm_id),
    appId: String(row.app_id),
    method: row.method,
    success: row.success !== 0,
    reason: row.reason,
    ip: row.ip,
    country: row.country,
    userAgent: row.user_agent,
    screen: row.screen,
    deviceGuid: row.device_guid,
    timezone: row.timezone,
    language: row.language,
    created: row.created,
  }
}

/**
 * GET /auth/v1/audit: the login audit log, newest first, filtered by user, IP address and time
 * range (`from` inclusive, `to` exclusive), paged with the `before` cursor. Callers need the
 * `admin` scope.
 */
export default async function loginAuditPlugin(
  app: Service,
  { loginAudit, defaultLimit, maxLimit }: LoginAuditPluginOptions,
) {
  app.get('/audit', { schema: auditQuery(maxLimit) }, async (request) => {
    requireScope(request.caller, AUDIT_SCOPE, 'The audit log needs the admin scope.')
    const { crmId, ip, from, to, before } = request.query
    const limit = request.query.limit ?? defaultLimit
    const rows = await loginAudit.query({
      crmId: crmId === undefined ? undefined : Number(crmId),
      ip,
      from,
      to,
      before: before === undefined ? undefined : Number(before),
      limit,
    })
    return { entries: rows.map(toAuditEntry), next: rows.length === limit ? String(rows.at(-1)!.id) : '' }
  })
}
