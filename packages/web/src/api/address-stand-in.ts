import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'

/** Storage in memory, with its items to look at; for the address tests. */
export function memoryStorage() {
  const items = new Map<string, string>()
  return {
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
    items,
  }
}

/**
 * A stand-in for one pN gateway on a loopback port, for the address tests: its health endpoint
 * answers after `delayMs` with `status`; `hits` counts the probes; `set` changes how it answers;
 * `close` stops it.
 */
export async function startAddress(t: TestContext, delayMs = 0, status = 200) {
  const state = { delayMs, status, hits: 0 }
  const server = createServer((request, response) => {
    if (request.url === '/auth/v1/health') state.hits++
    const timer = setTimeout(() => {
      response.writeHead(request.url === '/auth/v1/health' ? state.status : 404)
      response.end('{}')
    }, state.delayMs)
    response.on('close', () => clearTimeout(timer))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  let closed: Promise<void> | undefined
  const close = () =>
    (closed ??= new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }))
  t.after(close)
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    state,
    set: (next: { delayMs?: number; status?: number }) => Object.assign(state, next),
    close,
  }
}
