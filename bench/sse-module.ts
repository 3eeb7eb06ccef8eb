/**
 * The chat module of the SSE benchmark (bench/sse.ts) in its own process, so its work does not
 * share an event loop with the publisher or the gateway: `node bench/sse-module.ts <database url>`
 * listens on an ephemeral loopback port and prints `{"base": "http://127.0.0.1:<port>"}`.
 */
import { startServer } from './chat-setup.ts'
import { stopWithParent } from './child-process.ts'

const url = process.argv[2]
if (!url) throw new Error('usage: node bench/sse-module.ts <database url>')
const server = await startServer(url)
process.stdout.write(`${JSON.stringify({ base: server.base })}\n`)
stopWithParent(() => server.close())
