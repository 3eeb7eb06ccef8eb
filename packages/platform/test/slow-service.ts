// A service with one slow route, started as a child process by serve.test.ts to prove draining.
import { Type } from 'typebox'
import { createService, serve } from '../src/service.ts'

const app = createService({
  name: 'slow',
  healthPath: '/health',
  domainGuard: { domain: null, devHost: '' },
  logger: false,
})
app.get('/slow', { schema: { querystring: Type.Object({ ms: Type.Integer() }) } }, async (request) => {
  await new Promise((resolve) => setTimeout(resolve, request.query.ms))
  return { waited: request.query.ms }
})
await serve(app, { host: '127.0.0.1', port: 0 })
const address = app.server.address()
console.log(JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 }))
