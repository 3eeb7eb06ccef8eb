import { createSocket } from 'node:dgram'
import { createServer } from 'node:net'

/** Where the ports are drawn: below Linux's ephemeral range (32768–60999). */
const LOWEST = 20_000
const RANGE = 12_000

/**
 * A loopback port nothing listens on, for a server whose address must be known before it starts
 * (a gateway's PublicOrigin, coturn's command line). Drawn at random below the system's ephemeral
 * range: a port the system handed out and took back may go to another test's outgoing connection
 * or `listen(0)` before the server binds it (EADDRINUSE under CI load); below the range only
 * another test drawing the same port can take it. `udp`: free for UDP too (coturn listens on
 * both); `run`: this port and the next `run - 1` are all free (a system started on consecutive ports).
 */
export async function freePort({ udp = false, run = 1 } = {}): Promise<number> {
  for (;;) {
    const port = LOWEST + Math.floor(Math.random() * (RANGE - run))
    const ports = Array.from({ length: run }, (_, offset) => port + offset)
    const free = await Promise.all(ports.map(async (p) => (await bindsTcp(p)) && (!udp || (await bindsUdp(p)))))
    if (free.every(Boolean)) return port
  }
}

async function bindsTcp(port: number): Promise<boolean> {
  const server = createServer()
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => resolve(true))
  })
  if (bound) await new Promise<void>((resolve) => server.close(() => resolve()))
  return bound
}

async function bindsUdp(port: number): Promise<boolean> {
  const socket = createSocket('udp4')
  const bound = await new Promise<boolean>((resolve) => {
    socket.once('error', () => resolve(false))
    socket.bind(port, '127.0.0.1', () => resolve(true))
  })
  await new Promise<void>((resolve) => socket.close(() => resolve()))
  return bound
}
