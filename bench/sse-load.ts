/**
 * Load side of bench/sse.ts: the subscriber processes (bench/sse-client.ts) and the publisher, which
 * sends events at a fixed rate, each carrying its publish time as `sse-bench:<epoch ms>`.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import type { ClientConnected, ClientMessage, ClientReport, StreamSpec } from './sse-client.ts'

/** The publish time marker the clients look for in each event's data. */
export const marker = () => `sse-bench:${(performance.timeOrigin + performance.now()).toFixed(3)}`

export interface Subscribers {
  /** Opens the streams, spread over the processes; returns how many opened and the first error. */
  connect(port: number, streams: StreamSpec[]): Promise<{ connected: number; failed: number; firstError?: string }>
  /** Starts a measurement window. */
  /** Keeps the events published from `from` (epoch ms) on. */
  mark(from: number): void
  /** What arrived since the mark, over all processes. */
  /** Deliveries of the events published from the mark until `until` (epoch ms), whenever they arrived. */
  report(until: number): Promise<{ received: number; latencies: number[]; ended: number }>
  close(): Promise<void>
}

function ask<T>(child: ChildProcess, message: ClientMessage, answer: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (reply: { type: string }) => {
      if (reply.type !== answer) return
      child.off('message', onMessage)
      child.off('exit', onExit)
      resolve(reply as T)
    }
    const onExit = (code: number | null) => reject(new Error(`sse-client exited (${code})`))
    child.on('message', onMessage)
    child.once('exit', onExit)
    child.send(message)
  })
}

/** Forks `processes` subscriber processes. */
export function startSubscribers(processes: number): Subscribers {
  const children = Array.from({ length: processes }, () =>
    fork(join(import.meta.dirname, 'sse-client.ts'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  )
  return {
    async connect(port, streams) {
      const answers = await Promise.all(
        children.map((child, index) => {
          const share = streams.filter((_, i) => i % children.length === index)
          // Each process connects from its own loopback address: one address has about 28,000 ephemeral ports.
          const connect: ClientMessage = {
            type: 'connect',
            port,
            streams: share,
            concurrency: 64,
            localAddress: `127.0.0.${index + 2}`,
          }
          return ask<ClientConnected>(child, connect, 'connected')
        }),
      )
      const firstError = answers.find((answer) => answer.firstError)?.firstError
      return {
        connected: answers.reduce((sum, answer) => sum + answer.connected, 0),
        failed: answers.reduce((sum, answer) => sum + answer.failed, 0),
        ...(firstError ? { firstError } : {}),
      }
    },
    mark(from) {
      for (const child of children) child.send({ type: 'mark', from } satisfies ClientMessage)
    },
    async report(until) {
      const reports = await Promise.all(
        children.map((child) => ask<ClientReport>(child, { type: 'report', until }, 'report')),
      )
      return {
        received: reports.reduce((sum, report) => sum + report.received, 0),
        latencies: reports.flatMap((report) => report.latencies),
        ended: reports.reduce((sum, report) => sum + report.ended, 0),
      }
    },
    async close() {
      await Promise.all(
        children.map(async (child) => {
          if (child.exitCode !== null) return
          const exited = once(child, 'exit')
          child.send({ type: 'close' } satisfies ClientMessage)
          await exited
        }),
      )
    },
  }
}

export interface PublishResult {
  sent: number
  errors: number
  firstError?: string
}

/**
 * Calls `send(i)` `rate` times a second for `ms` without waiting for earlier calls, catching up
 * when the timer is late, and resolves when every call has settled.
 */
export async function publish(rate: number, ms: number, send: (index: number) => Promise<void>) {
  const result: PublishResult = { sent: 0, errors: 0 }
  const pending = new Set<Promise<void>>()
  const started = performance.now()
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = Math.min(ms, performance.now() - started)
      const due = Math.floor((elapsed * rate) / 1000)
      while (result.sent < due) {
        const call = send(result.sent++).catch((error: Error) => {
          result.errors++
          result.firstError ??= error.message
        })
        pending.add(call)
        call.finally(() => pending.delete(call))
      }
      if (elapsed >= ms) {
        clearInterval(timer)
        resolve()
      }
    }, 2)
  })
  await Promise.all(pending)
  return result
}
