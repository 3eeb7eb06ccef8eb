import type { Service } from '@atrium/platform'
import type { Store } from '../store.ts'
import type { EndReason } from './call-record.ts'
import { endCall } from './call-transitions.ts'
import type { CallSettings } from './calls.plugin.ts'
import { type CallLineRow, CallLineState } from './calls.repository.ts'

/** Calls ended per sweep at most; the next sweep takes the rest. */
const SWEEP_BATCH = 100

/** Why the heartbeat ends a call with these lines, or undefined when it is still alive. */
function overdueReason(lines: CallLineRow[], ringingBefore: number, silentBefore: number): EndReason | undefined {
  const first = lines[0]
  if (!first) return undefined
  if (first.state === CallLineState.Ringing) {
    if (first.since < ringingBefore) return 'missed'
    const caller = lines.find((line) => line.member === line.caller)
    return caller && caller.seen < silentBefore ? 'cancelled' : undefined
  }
  return lines.some((line) => line.seen < silentBefore) ? 'failed' : undefined
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
 * Calls.StaleSeconds (failed). Every chat instance sweeps; freeing the lines decides which one
 * records an end, so a call ends once.
 */
export function startCallHeartbeat(app: Service, { store, calls, now }: CallHeartbeatOptions): void {
  let running: Promise<void> | undefined

  async function sweep(): Promise<void> {
    const at = now()
    const ringingBefore = at - calls.RingSeconds * 1000
    const silentBefore = at - calls.StaleSeconds * 1000
    const lines = await store.calls.overdue(ringingBefore, silentBefore, SWEEP_BATCH)
    const callIds = [...new Set(lines.map((line) => line.call_id))]
    for (const callId of callIds) {
      const chat = await store.chats.find(lines.find((line) => line.call_id === callId)!.chat_id)
      await store.transact(async (unit) => {
        // Read again in the transaction: the call may have been answered or kept alive meanwhile.
        const reason = overdueReason(await unit.calls.lines(callId), ringingBefore, silentBefore)
        if (reason) await endCall(unit, store, { callId, appId: chat?.app_id ?? 0 }, () => reason, at)
      })
    }
  }

  const timer = setInterval(() => {
    if (running) return
    running = sweep()
      .catch((error: unknown) => app.log.error({ err: error }, 'call heartbeat failed'))
      .finally(() => {
        running = undefined
      })
  }, calls.SweepMs)
  timer.unref()
  app.addHook('onClose', async () => {
    clearInterval(timer)
    await running
  })
}
