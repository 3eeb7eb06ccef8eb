/**
 * What a gateway process drops from its in-memory caches when a credential or a user's scopes
 * change: a signed-out or evicted session, a revoked API key, a user whose scopes were set.
 */
export type Invalidation =
  | { kind: 'sessions'; ids: string[] }
  | { kind: 'apiKey'; id: number }
  | { kind: 'user'; crmId: number }

/** Carries an invalidation to the other workers of this node; resolves once they applied it. */
export type InvalidationRelay = (invalidation: Invalidation) => Promise<void>

/**
 * Cache invalidation across the workers of one node (docs/operations.md, "Workers"). A change
 * applies here at once and, with a relay, in every other worker before `publish` resolves, so
 * a request that follows the change's answer is judged by fresh data whichever worker takes it.
 */
export function createInvalidations(relay?: InvalidationRelay) {
  const handlers: ((invalidation: Invalidation) => void)[] = []

  function apply(invalidation: Invalidation) {
    for (const handler of handlers) handler(invalidation)
  }

  return {
    /** Applies an invalidation here and in the other workers; resolves when all have it. */
    async publish(invalidation: Invalidation): Promise<void> {
      apply(invalidation)
      await relay?.(invalidation)
    },
    /** Applies an invalidation another worker published. */
    apply,
    /** Registers what this process drops for an invalidation. */
    on(handler: (invalidation: Invalidation) => void): void {
      handlers.push(handler)
    },
  }
}

export type Invalidations = ReturnType<typeof createInvalidations>
