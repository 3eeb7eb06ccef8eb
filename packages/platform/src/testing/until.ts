import assert from 'node:assert/strict'

/**
 * Waits until `condition` holds, checking every 20 ms, and fails naming `what` after `timeoutMs`.
 * Tests wait for an effect this way, never by sleeping a fixed time (issue 14).
 */
export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
