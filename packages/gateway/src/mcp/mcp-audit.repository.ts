import type { TimetickGenerator } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { GatewayDatabase, McpAuditTable } from '../db/schema.ts'

export type McpAuditEntry = McpAuditTable

/** What happened to a tools/call. */
export type McpOutcome = 'ok' | 'refused' | 'invalid' | 'error'

export interface NewAuditEntry {
  crmId: number
  appId: number
  keyId: number
  keyType: string
  tool: string
  argsDigest: string
  outcome: McpOutcome
  errorCode: number
  durationMs: number
}

/** The audit of the MCP endpoint: one row per tools/call, allowed or refused (docs/mcp.md). */
export function createMcpAudit(db: Kysely<GatewayDatabase>, nextTick: TimetickGenerator, now: () => number) {
  return {
    async record(entry: NewAuditEntry): Promise<void> {
      await db
        .insertInto('mcp_audit')
        .values({
          id: nextTick(),
          created: now(),
          crm_id: entry.crmId,
          app_id: entry.appId,
          key_id: entry.keyId,
          key_type: entry.keyType,
          // An unknown tool's name is the caller's text: kept short.
          tool: entry.tool.slice(0, 64),
          args_digest: entry.argsDigest,
          outcome: entry.outcome,
          error_code: entry.errorCode,
          duration_ms: Math.min(Math.round(entry.durationMs), 2_147_483_647),
        })
        .execute()
    },

    /** Deletes the entries older than `before` (epoch ms); the number deleted. */
    async sweep(before: number): Promise<number> {
      const result = await db.deleteFrom('mcp_audit').where('created', '<', before).executeTakeFirst()
      return Number(result.numDeletedRows)
    },

    /** Entries from `since` (epoch ms) on, oldest first, at most `limit`. */
    async listSince(since: number, limit: number): Promise<McpAuditEntry[]> {
      return db.selectFrom('mcp_audit').selectAll().where('created', '>=', since).orderBy('id').limit(limit).execute()
    },
  }
}

export type McpAudit = ReturnType<typeof createMcpAudit>
