import { ApiError, type RequestView, subjectOf } from '@atrium/platform'
import type { FastifyBaseLogger } from 'fastify'
import type { GuestResolver } from '../guests/guest-resolver.ts'

/** A guest's capability: the invite code and the device that joined it (spec: "Authentication" 6). */
export interface GuestCredentials {
  code: string
  deviceGuid: string
}

/**
 * The guest credentials a subscribe request carries: the `code` and `device_guid` query parameters
 * (an EventSource cannot send headers), else the X-Invite-Code and X-Device-Guid headers every other
 * guest request sends. Undefined when neither pair is complete.
 */
export function guestCredentialsOf(
  request: RequestView,
  query: { code?: string; device_guid?: string },
): GuestCredentials | undefined {
  if (query.code !== undefined && query.device_guid !== undefined) {
    return { code: query.code, deviceGuid: query.device_guid }
  }
  const code = request.headers['x-invite-code']
  const deviceGuid = request.headers['x-device-guid']
  if (typeof code === 'string' && typeof deviceGuid === 'string') return { code, deviceGuid }
  return undefined
}

/**
 * The one subject of a guest's stream, `code:<guest id>`, derived from the guest's capability by the
 * chat module: never chosen by the client, so a guest cannot follow another code or a member.
 */
export async function guestSubjectOf(
  resolveGuest: GuestResolver | undefined,
  credentials: GuestCredentials,
  log: FastifyBaseLogger,
): Promise<{ guest: number; subject: string }> {
  let resolved: Awaited<ReturnType<GuestResolver>>
  try {
    resolved = resolveGuest && (await resolveGuest(credentials.code, credentials.deviceGuid))
  } catch (error) {
    log.warn({ err: error }, 'events: could not ask the chat module about a guest')
    throw new ApiError('BadGateway', 'the chat module could not say who this guest is; try again shortly')
  }
  if (!resolved) {
    throw new ApiError(
      'InviteNotFound',
      'no guest of this invite on this device: the invite was revoked, or not joined',
    )
  }
  return { guest: resolved.guest, subject: subjectOf('code', resolved.guest) }
}

export interface GuestWatchOptions {
  resolveGuest: GuestResolver
  credentials: GuestCredentials
  guest: number
  everyMs: number
  /** Ends the stream: the invite no longer names this guest. */
  close: () => void
  log: FastifyBaseLogger
}

/**
 * Asks the chat module every `everyMs` whether the stream's guest still stands and closes the stream
 * when not (a revoked invite). The chat module already gives a revoked guest's subject no events;
 * this ends the stream itself, and the reconnect is refused. A chat module that cannot answer leaves
 * the stream open. Returns the function that stops watching.
 */
export function watchGuest({ resolveGuest, credentials, guest, everyMs, close, log }: GuestWatchOptions): () => void {
  let asking = false
  const timer = setInterval(async function checkGuest() {
    if (asking) return
    asking = true
    try {
      const resolved = await resolveGuest(credentials.code, credentials.deviceGuid)
      if (resolved?.guest !== guest) {
        log.info({ guest }, 'events: the guest’s invite no longer stands; stream closed')
        close()
      }
    } catch (error) {
      log.debug({ err: error }, 'events: could not check a guest’s invite; the stream stays open')
    } finally {
      asking = false
    }
  }, everyMs)
  timer.unref()
  return () => clearInterval(timer)
}
