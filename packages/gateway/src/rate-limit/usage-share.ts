import { notifyBatches } from '@atrium/platform'
import type { NodeMessages } from '../server/node-messages.ts'

/** A limit key: a session id, an API key number or a client address (rate-limits.ts). */
export type UsageKey = string | number

/**
 * Uses of one limit scope that one gateway process counted since its last report, per key, in the
 * window ending at `windowEnd` (epoch ms: windows are aligned to the clock, so every process
 * names the same window alike).
 */
export interface UsageReport {
  scope: string
  windowEnd: number
  uses: [UsageKey, number][]
  /**
   * The sender's NodeNumber when its node's workers count together through their primary
   * (node-window.ts): the processes of that node skip the report, their primary has it already.
   */
  node?: number
}

/**
 * How limit usage goes between gateway processes, so a limit holds for all of them together: the
 * workers of one node (`workersUsage`), or every gateway process on one PostgreSQL gateway
 * database (`createUsageLink`, docs/operations.md, "A PostgreSQL deployment of several gateways").
 */
export interface UsageShare {
  /** Tells the other processes; they never send a report back to its sender. */
  publish(report: UsageReport): void
  /** Reports from the other processes. */
  subscribe(receive: (report: UsageReport) => void): void
}

/** The node's workers as a usage share (through the primary); undefined for a gateway that is its node's only process. */
export function workersUsage(node: NodeMessages): UsageShare | undefined {
  if (!node.shared) return undefined
  return {
    publish: (report) => node.publish({ kind: 'usage', ...report }),
    subscribe: (receive) => node.on('usage', ({ scope, windowEnd, uses }) => receive({ scope, windowEnd, uses })),
  }
}

/** The channel's name (signals/gateway-links.ts). */
export const USAGE_CHANNEL = 'atrium_gateway_usage'

/** A report as notification payloads within PostgreSQL's payload limit, its uses split between them. */
export function usagePayloads({ scope, windowEnd, uses, node }: UsageReport): string[] {
  const overhead = Buffer.byteLength(JSON.stringify({ scope, windowEnd, node, uses: [] })) - 2
  return notifyBatches(uses, overhead).map((batch) => JSON.stringify({ scope, windowEnd, node, uses: batch }))
}

function isUse(value: unknown): value is [UsageKey, number] {
  if (!Array.isArray(value) || value.length !== 2) return false
  const [key, amount] = value as unknown[]
  return (
    (typeof key === 'string' || Number.isSafeInteger(key)) && Number.isSafeInteger(amount) && (amount as number) > 0
  )
}

/** A report from a notification payload; undefined when it is not one. */
export function parseUsageReport(payload: string): UsageReport | undefined {
  try {
    const value = JSON.parse(payload) as Partial<UsageReport>
    if (
      typeof value.scope === 'string' &&
      Number.isSafeInteger(value.windowEnd) &&
      Array.isArray(value.uses) &&
      value.uses.every(isUse) &&
      (value.node === undefined || Number.isSafeInteger(value.node))
    ) {
      const { scope, windowEnd, uses, node } = value
      return { scope, windowEnd: windowEnd!, uses, ...(node !== undefined && { node }) }
    }
  } catch {}
  return undefined
}

/**
 * Usage between every gateway process on one PostgreSQL gateway database, other nodes' included:
 * a report goes out as one or more notifications (`send`), and what arrives (`receive`) reaches
 * the subscribers; a malformed payload is dropped and reported to `malformed`.
 */
export function createUsageLink(send: (payload: string) => void, malformed: (payload: string) => void) {
  const subscribers: ((report: UsageReport) => void)[] = []
  return {
    share: {
      publish(report) {
        for (const payload of usagePayloads(report)) send(payload)
      },
      subscribe(receive) {
        subscribers.push(receive)
      },
    } satisfies UsageShare,
    receive(payload: string): void {
      const report = parseUsageReport(payload)
      if (report) for (const receive of subscribers) receive(report)
      else malformed(payload)
    },
  }
}

/** How often a process tells the others what it counted: the most a shared limit can be overrun by is this much of everyone's traffic. */
const USAGE_REPORT_MS = 100

/** A window that other processes' uses are added to (fixed-window.ts, node-window.ts). */
export interface SharedWindow {
  windowEnd(): number
  addFrom(end: number, key: UsageKey, amount: number): void
}

/**
 * Limits shared by several gateway processes (docs/operations.md, "Workers" and "A PostgreSQL
 * deployment of several gateways"): each counts its own requests at once and tells the others
 * what it counted every USAGE_REPORT_MS; theirs are added to its windows (clock-aligned, so every
 * process's window is the same one). A key is thus refused once everyone's total reaches its
 * limit, give or take one report interval. Each user of a share (the caller limits, typing) makes
 * its own: reports name their scope, and a scope nobody here counts is ignored. With `node` (a
 * worker whose node's primary counts the caller limits, node-window.ts) reports name that node,
 * and the reports of its own processes are skipped: the primary has counted them already.
 */
export function shareUsage(share: UsageShare, { node }: { node?: number } = {}) {
  const windows = new Map<string, SharedWindow>()
  const pending = new Map<string, { end: number; uses: Map<UsageKey, number> }>()

  function send(scope: string, batch: { end: number; uses: Map<UsageKey, number> }) {
    if (batch.uses.size > 0) share.publish({ scope, windowEnd: batch.end, uses: [...batch.uses], node })
  }
  const timer = setInterval(() => {
    for (const [scope, batch] of pending) send(scope, batch)
    pending.clear()
  }, USAGE_REPORT_MS)
  timer.unref()
  share.subscribe((report) => {
    const { scope, windowEnd, uses } = report
    const window = windows.get(scope)
    if (window && (node === undefined || report.node !== node))
      for (const [key, amount] of uses) window.addFrom(windowEnd, key, amount)
  })

  return {
    /** The `counted` callback of one scope's window. */
    counter(scope: string) {
      return (key: UsageKey, amount: number) => {
        if (amount === 0) return
        const end = windows.get(scope)?.windowEnd() ?? 0
        let batch = pending.get(scope)
        if (batch?.end !== end) {
          if (batch) send(scope, batch)
          batch = { end, uses: new Map() }
          pending.set(scope, batch)
        }
        batch.uses.set(key, (batch.uses.get(key) ?? 0) + amount)
      }
    },
    /** The windows other processes' uses are added to. */
    count(scopes: Record<string, SharedWindow | null>) {
      for (const [scope, window] of Object.entries(scopes)) {
        if (window) windows.set(scope, window)
      }
    },
    close: () => clearInterval(timer),
  }
}
