import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from './errors.ts'

/**
 * Idempotent writes (the IETF httpapi "Idempotency-Key" draft and Stripe's convention): a client
 * names an operation with a key, and a repeat of the key answers the first outcome instead of
 * performing the operation again. Shared by the chat module's send_message, the wallet's send and
 * the payment module's order start.
 */

/** The request header naming an operation (lower-case, as Node delivers it). */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key'

/** The response header that marks an answer given again for a repeated key. */
export const REPLAYED_HEADER = 'Idempotent-Replayed'

/** A valid key: 1–64 letters, digits, `_`, `.`, `:` or `-`. */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/

/** The request's Idempotency-Key, or '' without one; InvalidIdempotencyKey when it is malformed or repeated. */
export function readIdempotencyKey(request: FastifyRequest): string {
  const value = request.headers[IDEMPOTENCY_KEY_HEADER]
  if (value === undefined) return ''
  // Node joins a repeated header with ", ", which the pattern refuses: one operation, one key.
  if (typeof value !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(value)) {
    throw new ApiError('InvalidIdempotencyKey')
  }
  return value
}

/** A stable digest of what a request asks for, to tell a repeat from another request under the same key. */
export function fingerprintOf(fields: readonly (string | number)[]): string {
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex')
}

/** Refuses a key first used for a different request. */
export function requireSameRequest(stored: string, fingerprint: string, key: string): void {
  if (stored !== fingerprint) {
    throw new ApiError(
      'IdempotencyKeyReused',
      `Idempotency-Key ${key} was already used for a different request; use a new key for a new operation`,
    )
  }
}

/** Marks an answer as the stored outcome of an earlier request with the same key. */
export function markReplayed(reply: FastifyReply): void {
  reply.header(REPLAYED_HEADER, 'true')
}

/** True for a unique or primary-key violation on SQLite and PostgreSQL (a parallel request took the key). */
export function isUniqueViolation(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown }
  return code === '23505' || (typeof message === 'string' && message.includes('UNIQUE constraint failed'))
}

/** How long keys are kept at least, in hours, and the oldest creation time still honoured. */
export function keyCutoff(now: number, retentionHours: number): number {
  return now - retentionHours * 3_600_000
}
