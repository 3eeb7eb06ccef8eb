import type { UsageKey } from './usage-share.ts'

/**
 * The node's limits between its workers and the primary (server/workers.ts carries them). A
 * window is named by its end (epoch ms): windows are aligned to the clock, so every process of the
 * node names the same window alike.
 */
export type LimitMessage =
  /**
   * Worker → primary: count `amount` for the key, with `check` only while the node's total is
   * below `limit`; answered by a grant with the same id.
   */
  | { op: 'ask'; id: number; scope: string; key: UsageKey; end: number; limit: number; amount: number; check: boolean }
  /** Primary → worker: whether ask `id` was counted, and an allowance the worker may count without asking. */
  | { op: 'grant'; id: number; admitted: boolean; allowance: number }
  /** Primary → worker: give back what is left of your allowance for the key; answered by `returned`. */
  | { op: 'reclaim'; id: number; scope: string; key: UsageKey; end: number }
  | { op: 'returned'; id: number; amount: number }
  /** Worker 0 → primary: uses that other gateway nodes reported (PostgreSQL), counted without an answer. */
  | { op: 'foreign'; scope: string; key: UsageKey; end: number; limit: number; amount: number }

/** A worker as the primary reaches it; a restarted worker is another peer. */
export interface LimitPeer {
  send(message: LimitMessage): void
}

/** How long the primary waits for a worker to give back an allowance before counting it as used. */
const RECLAIM_TIMEOUT_MS = 2_000

interface KeyState {
  /** What the node used of the key's window, plus the allowances the workers hold. */
  counted: number
  holders: Set<LimitPeer>
  /** The key's decisions, one after the other: a reclaim waits for the workers' answers. */
  turn: Promise<void>
}

/**
 * The primary's side of the node's session, API-key and bandwidth limits (docs/operations.md,
 * "Workers"): the one place that knows each key's total, so a limit is exact for the node. A
 * worker counts without asking while it holds an allowance for the key; the primary hands out at
 * most what is left below the limit, a share of it per grant that shrinks near the limit (down to
 * one use, a round trip per request), so the sum of what workers admitted and may still admit
 * never passes it. When a worker asks and nothing is left, the primary first takes back what the
 * other workers hold unused, so nobody is refused while the node's total is below the limit. A
 * worker that dies keeps its allowance counted as used (what it admitted is unknown) until the
 * window ends; it is never waited for again.
 */
export function createLimitGrants(workers: number) {
  /** scope → window end → key; the newest two windows of each scope (an ask sent just before a window ended still finds its own). */
  const scopes = new Map<string, Map<number, Map<UsageKey, KeyState>>>()
  const reclaims = new Map<number, { peer: LimitPeer; settle: (amount: number) => void }>()
  let nextId = 0

  function stateOf(scope: string, end: number, key: UsageKey): KeyState | undefined {
    const windows = scopes.get(scope) ?? new Map<number, Map<UsageKey, KeyState>>()
    scopes.set(scope, windows)
    let keys = windows.get(end)
    if (!keys) {
      // A window older than the two newest is over: nothing of it is kept.
      if ([...windows.keys()].filter((other) => other > end).length >= 2) return undefined
      keys = new Map()
      windows.set(end, keys)
      for (const old of [...windows.keys()].sort((a, b) => b - a).slice(2)) windows.delete(old)
    }
    const state = keys.get(key) ?? { counted: 0, holders: new Set(), turn: Promise.resolve() }
    keys.set(key, state)
    return state
  }

  function reclaimFrom(peer: LimitPeer, scope: string, key: UsageKey, end: number): Promise<number> {
    return new Promise((resolve) => {
      const id = ++nextId
      const timer = setTimeout(() => settle(0), RECLAIM_TIMEOUT_MS)
      function settle(amount: number) {
        clearTimeout(timer)
        reclaims.delete(id)
        resolve(amount)
      }
      reclaims.set(id, { peer, settle })
      peer.send({ op: 'reclaim', id, scope, key, end })
    })
  }

  /** Takes back every worker's unused allowance for the key. */
  async function reclaim(state: KeyState, scope: string, key: UsageKey, end: number) {
    const holders = [...state.holders]
    state.holders.clear()
    const returned = await Promise.all(holders.map((peer) => reclaimFrom(peer, scope, key, end)))
    for (const amount of returned) state.counted -= amount
  }

  async function decide(peer: LimitPeer, ask: Extract<LimitMessage, { op: 'ask' }>, state: KeyState) {
    const { id, scope, key, end, limit, amount, check } = ask
    if (check && state.counted >= limit) await reclaim(state, scope, key, end)
    if (check && state.counted >= limit) return peer.send({ op: 'grant', id, admitted: false, allowance: 0 })
    state.counted += amount
    // Bytes past a worker's allowance (a large body or reply) may take the node past the limit:
    // the others' allowances are taken back before the worker goes on, so that the next request
    // is refused wherever it lands.
    if (state.counted > limit && state.holders.size > 0) await reclaim(state, scope, key, end)
    const left = limit - state.counted
    const allowance = left > 0 ? Math.max(1, Math.floor(left / (2 * workers))) : 0
    state.counted += allowance
    if (allowance > 0) state.holders.add(peer)
    peer.send({ op: 'grant', id, admitted: true, allowance })
  }

  return {
    /** Handles a worker's limit message. */
    receive(peer: LimitPeer, message: LimitMessage): void {
      if (message.op === 'returned') {
        reclaims.get(message.id)?.settle(message.amount)
        return
      }
      if (message.op !== 'ask' && message.op !== 'foreign') return
      const { scope, key, end, limit } = message
      const state = stateOf(scope, end, key)
      if (message.op === 'foreign') {
        if (!state) return
        state.counted += message.amount
        if (state.counted > limit) state.turn = state.turn.then(() => reclaim(state, scope, key, end))
      } else if (!state) {
        // Its window is over here: nothing is left to count it against.
        peer.send({ op: 'grant', id: message.id, admitted: true, allowance: 0 })
      } else state.turn = state.turn.then(() => decide(peer, message, state))
    },

    /** A worker stopped: its allowances stay counted, and nobody waits for it any more. */
    gone(peer: LimitPeer): void {
      for (const windows of scopes.values())
        for (const keys of windows.values()) for (const state of keys.values()) state.holders.delete(peer)
      for (const { peer: holder, settle } of [...reclaims.values()]) if (holder === peer) settle(0)
    },
  }
}

export type LimitGrants = ReturnType<typeof createLimitGrants>
