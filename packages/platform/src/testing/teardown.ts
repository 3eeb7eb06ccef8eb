import type { TestContext } from 'node:test'

/**
 * Servers a test started, closed before its databases are removed. A test's after-hooks run in
 * the order they were added, and a test's database is made (and its removal hooked) before the
 * server on it starts; removing a PostgreSQL schema while a server still queries it (a poller, a
 * sweep, a sync) deadlocks or leaves the server waiting forever. So the removal first closes every
 * server of the test, newest first (a gateway before the module it calls).
 */
const servers = new WeakMap<object, Array<() => Promise<void>>>()

/** Closes `close` after the test, and before any of the test's databases go; closing twice is once. */
export function closeAfterTest(t: Pick<TestContext, 'after'>, close: () => Promise<unknown>): void {
  let closing: Promise<void> | undefined
  const once = () => (closing ??= close().then(() => undefined))
  const list = servers.get(t) ?? []
  list.push(once)
  servers.set(t, list)
  t.after(once)
}

/** Closes every server of the test that closeAfterTest knows, newest first. */
export async function closeTestServers(t: Pick<TestContext, 'after'>): Promise<void> {
  for (const close of [...(servers.get(t) ?? [])].reverse()) await close()
}
