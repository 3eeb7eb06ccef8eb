import { type Service, startBackgroundSweep } from '@atrium/platform'
import type { Store } from '../store.ts'
import type { EndReason } from './call-record.ts'
import { endCall } from './call-transitions.ts'
import type { CallSettings } from './calls.plugin.ts'
import { type CallLineRow, CallLineState } from './calls.repository.ts'

/** Calls ended per sweep at most; the next sweep takes the rest. */
const SWEEP_BATCH = 100

/**
 * Why the heartbeat ends a call with these lines and when it ended, or undefined when it is still
 * alive. A connected call that went silent ended at the silent side's last sign of life, so its
 * duration does not count the silence the heartbeat waited out.
 */
function overdue(
  lines: CallLineRow[],
  ringingBefore: number,
  silentBefore: number,
  now: number,
): { reason: EndReason; at: number } | undefined {
  const first = lines[0]
  if (!first) return undefined
  if (first.state === CallLineState.Ringing) {
    if (first.since < ringingBefore) return { reason: 'missed', at: now }
    const caller = lines.find((line) => line.member === line.caller)
    return caller && caller.seen < silentBefore ? { reason: 'cancelled', at: now } : undefined
  }
  const lastSeen = Math.min(...lines.map((line) => line.seen))
  return lastSeen < silentBefore ? { reason: 'failed', at: lastSeen } : undefined
}

export interface CallHeartbeatOptions {
  store: Store
  calls: CallSettings
  now: () => number
}

/**
 * The server heartbeat (spec: "stale-call cleanup by server heartbeat"): every Calls.SweepMs it
 * ends the calls nobody answered within Calls.RingSeconds (missed), the ringing calls whose caller
 * went silent (cancelled), and the connected calls a participant stopped keeping alive for
 * Calls.StaleSeconds (failed, ended at that participant's last sign of life). Every chat instance sweeps; freeing the lines decides which one
 * records an end, so a call ends once.
 */
export function startCallHeartbeat(app: Service, { store, calls, now }: CallHeartbeatOptions): void {
  startBackgroundSweep(app, calls.SweepMs, 'call heartbeat', async () => {
    const at = now()
    const ringingBefore = at - calls.RingSeconds * 1000
    const silentBefore = at - calls.StaleSeconds * 1000
    const lines = await store.calls.overdue(ringingBefore, silentBefore, SWEEP_BATCH)
    const callIds = [...new Set(lines.map((line) => line.call_id))]
    for (const callId of callIds) {
      const chat = await store.chats.find(lines.find((line) => line.call_id === callId)!.chat_id)
      await store.transact(async (unit) => {
        // Read again in the transaction: the call may have been answered or kept alive meanwhile.
        const ended = overdue(await unit.calls.lines(callId), ringingBefore, silentBefore, at)
        if (ended) await endCall(unit, store, { callId, appId: chat?.app_id ?? 0 }, () => ended.reason, ended.at)
      })
    }
  })
}
