/**
 * What the gateway processes of one node tell each other besides cache invalidations
 * (docs/operations.md, "Workers"): live signals and the state that makes limits and presence
 * node-wide rather than per process. Sent without waiting for an answer; a message that is lost
 * (a worker restarting) costs a typing frame or a fraction of a limit window, never a decision.
 */
export type NodeMessage =
  /** A typing frame for the members' streams, whichever worker holds them. */
  | { kind: 'typing'; members: number[]; chunk: string }
  /** A person's stream opened (`open`) or closed on the sending worker. */
  | { kind: 'presence'; crmId: number; open: boolean }
  /** Uses of a limit scope counted by the sending worker since its last report, per key, in the window ending at `windowEnd`. */
  | { kind: 'usage'; scope: string; windowEnd: number; uses: [string | number, number][] }
  /** The primary's notice that a worker stopped: what it reported of its streams no longer holds. */
  | { kind: 'gone' }

/** A message as a worker receives it: with the index of the worker that sent it. */
export type Delivered<K extends NodeMessage['kind']> = Extract<NodeMessage, { kind: K }> & { from: number }

/** Sends a message to the node's other workers (through the primary). */
export type NodeBroadcast = (message: NodeMessage) => void

/**
 * The node's message channel as one worker sees it. Without a broadcast (a gateway that is its
 * node's only process) publishing does nothing and nothing arrives.
 */
export function createNodeMessages(broadcast?: NodeBroadcast) {
  const handlers = new Map<string, ((message: NodeMessage & { from: number }) => void)[]>()
  return {
    /** Whether other workers exist to tell. */
    shared: broadcast !== undefined,
    publish(message: NodeMessage): void {
      broadcast?.(message)
    },
    /** Hands a message from another worker to the handlers of its kind. */
    receive(message: NodeMessage & { from: number }): void {
      for (const handler of handlers.get(message.kind) ?? []) handler(message)
    },
    on<K extends NodeMessage['kind']>(kind: K, handler: (message: Delivered<K>) => void): void {
      const list = handlers.get(kind) ?? []
      list.push(handler as (message: NodeMessage & { from: number }) => void)
      handlers.set(kind, list)
    },
  }
}

export type NodeMessages = ReturnType<typeof createNodeMessages>
