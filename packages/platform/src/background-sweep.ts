import type { FastifyInstance } from 'fastify'

/**
 * Runs `sweep` every `everyMs` in the background, never two at once, logging a failure as `what`
 * failed; the app's close stops the timer and waits for a sweep under way.
 */
export function startBackgroundSweep(
  app: FastifyInstance,
  everyMs: number,
  what: string,
  sweep: () => Promise<unknown>,
): void {
  let running: Promise<unknown> | undefined
  const timer = setInterval(() => {
    if (running) return
    running = sweep()
      .catch((error: unknown) => app.log.error({ err: error }, `${what} failed`))
      .finally(() => {
        running = undefined
      })
  }, everyMs)
  timer.unref()
  app.addHook('onClose', async () => {
    clearInterval(timer)
    await running
  })
}
