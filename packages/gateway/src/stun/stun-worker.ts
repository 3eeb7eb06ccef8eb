/**
 * One thread of the STUN responder when `Stun.Threads` is above 0 (started by stun-threads.ts):
 * its own `reusePort` socket on each target answers Binding requests without the main thread. What
 * it answered reaches the main thread in batches: per source address only the last
 * BINDINGS_PER_SOURCE, for at most `trackedSources` addresses, so a flood costs the main thread one
 * small message per FLUSH_MS and the memory stays bounded as in the main thread's own table.
 */
import type { Socket } from 'node:dgram'
import { parentPort, workerData } from 'node:worker_threads'
import { type BindTarget, bindStunSocket, type SeenBinding, type StunOutcome, stunAnswerer } from './stun-socket.ts'
import type { FromStunWorker, StunWorkerData, ToStunWorker } from './stun-threads.ts'

const { targets, software, trackedSources, bindingsPerSource, flushMs } = workerData as StunWorkerData
const port = parentPort!
const sockets: Socket[] = []
let pending = new Map<string, SeenBinding[]>()
let counts: Record<StunOutcome, number> = { answered: 0, unknownAttributes: 0, dropped: 0 }
let sendError: string | undefined
let sendErrorTold = false
let closing = false

const post = (message: FromStunWorker) => port.postMessage(message)

const onMessage = stunAnswerer(software, (outcome, source) => {
  counts[outcome]++
  if (!source || outcome === 'dropped') return
  let list = pending.get(source.address)
  if (!list) {
    if (pending.size >= trackedSources) pending.delete(pending.keys().next().value as string)
    list = []
    pending.set(source.address, list)
  }
  if (list.length === bindingsPerSource) list.shift()
  list.push({ family: source.family, address: source.address, port: source.port, at: Date.now(), outcome })
})

function onError(error: Error) {
  if (!sendErrorTold) sendError ??= error.message
}

/** Hands what was answered since the last flush to the main thread; nothing when nothing happened. */
function flush() {
  const total = counts.answered + counts.unknownAttributes + counts.dropped
  if (total === 0 && sendError === undefined) return
  post({ kind: 'seen', counts, bindings: [...pending.values()].flat(), sendError })
  if (sendError !== undefined) sendErrorTold = true
  sendError = undefined
  pending = new Map()
  counts = { answered: 0, unknownAttributes: 0, dropped: 0 }
}

async function bindAll(list: BindTarget[]) {
  try {
    for (const target of list) {
      const socket = await bindStunSocket(target, true)
      // Asked to close while binding: this socket goes too, and nothing is announced.
      if (closing) {
        socket.close()
        return
      }
      socket.on('message', onMessage)
      socket.on('error', onError)
      sockets.push(socket)
    }
    post({ kind: 'bound', addresses: sockets.map((socket) => socket.address()) })
  } catch (error) {
    const { message, code } = error as NodeJS.ErrnoException
    post({ kind: 'bindFailed', message, code })
    clearInterval(timer)
    await closeAll()
    port.close()
  }
}

async function closeAll() {
  await Promise.all(sockets.splice(0).map((socket) => new Promise<void>((resolve) => socket.close(() => resolve()))))
}

const timer = setInterval(flush, flushMs)

port.on('message', async (message: ToStunWorker) => {
  if (message.kind !== 'close') return
  closing = true
  clearInterval(timer)
  await closeAll()
  flush()
  // With its sockets, timer and port closed, the thread ends by itself (exit code 0).
  port.close()
})

await bindAll(targets)
