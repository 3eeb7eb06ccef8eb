// A service with one held route, started as a child process by serve.test.ts to prove draining:
// GET /held prints {"held":true} once it has the request, and answers when a line arrives on stdin.
import { once } from 'node:events'
import { createService, serve } from '../src/service.ts'

const app = createService({
  name: 'slow',
  version: '1.2.3',
  healthPath: '/health',
  domainGuard: { domain: null, devHost: '' },
  logger: false,
})
app.get('/held', async () => {
  console.log(JSON.stringify({ held: true }))
  await once(process.stdin, 'data')
  return { released: true }
})
await serve(app, { host: '127.0.0.1', port: 0 })
const address = app.server.address()
console.log(JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 }))
