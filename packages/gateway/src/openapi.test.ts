import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { type DatabaseDialect, errorCodes } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { startGateway } from '../test/support.ts'

interface Operation {
  parameters?: { name: string; in: string; required?: boolean; schema?: object }[]
  requestBody?: { required?: boolean; content: Record<string, { schema?: { type?: string } }> }
  responses: Record<string, { description?: string; content?: Record<string, { schema?: Record<string, unknown> }> }>
  security?: Record<string, string[]>[]
}
interface OpenApiDocument {
  openapi: string
  info: { title: string; version: string }
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, object>; securitySchemes: Record<string, Record<string, string>> }
  security?: Record<string, string[]>[]
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])
// Registered but deliberately not documented: the platform's liveness route (registered before the
// document is installed), the document itself, the catch-alls that answer NotFound for /private, and
// the tus upload protocol (binary bodies and header-only answers; docs/files.md).
const UNDOCUMENTED = new Set([
  '/auth/v1/health',
  // Readiness, the Prometheus text and the processes' versions: operator endpoints beside health,
  // in docs/operations.md.
  '/auth/v1/ready',
  '/auth/v1/metrics',
  '/auth/v1/modules',
  '/auth/v1/openapi.json',
  '/private',
  '/private/',
  '/private/*',
  '/auth/v1/uploads',
  '/auth/v1/uploads/:id',
  // The federated return and Telegram's widget page: browser-only steps the spec leaves unshown.
  '/auth/v1/federated/return',
  '/auth/v1/federated/telegram',
  // MCP: JSON-RPC 2.0 messages, documented in docs/mcp.md and described by tools/list.
  '/auth/v1/mcp',
])
// POST operations that take no body; any other state-changing operation must declare one.
const BODYLESS = new Set(['post /auth/v1/logout', 'post /auth/v1/logout_all'])
// Sign-in operations, and others open to anyone: they take no credentials.
const PUBLIC = [
  'post /auth/v1/email/start',
  'post /auth/v1/email/verify',
  'post /auth/v1/phone/start',
  'post /auth/v1/phone/verify',
  'get /auth/v1/magic',
  'post /auth/v1/magic',
  'post /auth/v1/app/login',
  'post /auth/v1/userkey/challenge',
  'post /auth/v1/userkey/verify',
  'post /auth/v1/passkeys/authenticate/options',
  'post /auth/v1/passkeys/authenticate/verify',
  'get /auth/v1/federated/providers',
  'get /auth/v1/federated/start',
  // STUN for anyone; the session, or a guest's invite code, adds TURN credentials (docs/calls.md).
  'get /auth/v1/call/ice_servers',
]

/**
 * The `method path` of every route in Fastify's route tree (`printRoutes`), paths in OpenAPI form
 * (`{id}`), without the automatic HEAD routes, the proxy's and frontends' routes (anything outside
 * /auth/ and /private/) and the UNDOCUMENTED ones.
 */
function registeredOperations(tree: string): string[] {
  const stack: string[] = []
  const operations: string[] = []
  for (const line of tree.split('\n')) {
    const match = /^((?:[│ ] {3})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line)
    if (!match) continue
    const depth = match[1]!.length / 4
    const path = (stack[depth - 1] ?? '') + match[2]
    stack[depth] = path
    if (!match[3] || UNDOCUMENTED.has(path) || !/^\/(auth|private)\//.test(path)) continue
    const openApiPath = path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
    for (const method of match[3].split(', ')) {
      if (method !== 'HEAD') operations.push(`${method.toLowerCase()} ${openApiPath}`)
    }
  }
  return operations.sort()
}

function operationsOf(document: OpenApiDocument): [string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]): [string, Operation] => [`${method} ${path}`, operation]),
  )
}

/** A test gateway and the OpenAPI document it serves. */
async function startWithDocument(t: TestContext, dialect: DatabaseDialect) {
  const gateway = await startGateway(t, dialect)
  const response = await fetch(`${gateway.url}/auth/v1/openapi.json`)
  assert.equal(response.status, 200)
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/)
  return { ...gateway, document: (await response.json()) as OpenApiDocument }
}

forEachDialect('the OpenAPI document lists exactly the endpoints the gateway registered', async (t, dialect) => {
  const { app, document } = await startWithDocument(t, dialect)
  const registered = registeredOperations(app.printRoutes({ commonPrefix: false }))
  assert.ok(registered.includes('post /auth/v1/email/start'), 'the route tree was read')
  assert.ok(registered.includes('delete /auth/v1/keys/{id}'), 'path parameters are in OpenAPI form')
  const documented = operationsOf(document)
    .map(([operation]) => operation)
    .sort()
  assert.deepEqual(documented, registered)
})

forEachDialect('the document is a well-formed OpenAPI 3.1 document', async (t, dialect) => {
  const { document } = await startWithDocument(t, dialect)
  assert.match(document.openapi, /^3\.1\.\d+$/)
  assert.equal(document.info.title, 'Atrium gateway')
  assert.match(document.info.version, /^\d+\.\d+\.\d+$/)
  for (const [path, item] of Object.entries(document.paths)) {
    assert.match(path, /^\//)
    for (const [method, operation] of Object.entries(item)) {
      const name = `${method} ${path}`
      assert.ok(METHODS.has(method), `${name}: a method OpenAPI knows`)
      assert.ok(Object.keys(operation.responses).length > 0, `${name} has responses`)
      for (const [status, response] of Object.entries(operation.responses)) {
        assert.match(status, /^(default|[1-5](\d\d|XX))$/, `${name} ${status}`)
        assert.equal(typeof response.description, 'string', `${name} ${status} has a description`)
      }
      for (const parameter of operation.parameters ?? []) {
        assert.ok(['query', 'header', 'path', 'cookie'].includes(parameter.in), `${name} ${parameter.name}`)
        assert.ok(parameter.schema, `${name} ${parameter.name} has a schema`)
      }
      for (const [, template] of path.matchAll(/\{([^}]+)\}/g)) {
        const declared = operation.parameters?.find(
          (parameter) => parameter.in === 'path' && parameter.name === template,
        )
        assert.equal(declared?.required, true, `${name} declares its path parameter ${template}`)
      }
    }
  }
  const text = JSON.stringify(document)
  for (const [, ref] of text.matchAll(/"\$ref":"#\/([^"]+)"/g)) {
    const target = ref!.split('/').reduce<unknown>((node, key) => (node as Record<string, unknown>)?.[key], document)
    assert.ok(target, `$ref #/${ref} resolves`)
  }
})

forEachDialect(
  'operations declare their JSON bodies and answer failures with the ErrorEnvelope',
  async (t, dialect) => {
    const { document } = await startWithDocument(t, dialect)
    const errorEnvelope = document.components.schemas.ErrorEnvelope
    assert.ok(errorEnvelope, 'ErrorEnvelope is a component')
    const operations = operationsOf(document)
    for (const bodyless of BODYLESS)
      assert.ok(
        operations.some(([name]) => name === bodyless),
        `${bodyless} exists`,
      )
    for (const [name, operation] of operations) {
      const method = name.split(' ')[0]!
      if (['post', 'put', 'patch'].includes(method) && !BODYLESS.has(name)) {
        const body = operation.requestBody?.content['application/json']?.schema
        assert.equal(body?.type, 'object', `${name} declares its JSON body`)
      } else {
        assert.equal(operation.requestBody, undefined, `${name} takes no body`)
      }
      const failure = operation.responses.default?.content?.['application/json']?.schema
      assert.ok(failure, `${name} documents its failures`)
      const { description: _, ...schema } = failure
      assert.deepEqual(schema, errorEnvelope, `${name} fails with the ErrorEnvelope`)
      const successes = Object.entries(operation.responses).filter(
        ([status, response]) => /^2/.test(status) && response.content?.['application/json'],
      )
      for (const [status, response] of successes) {
        const required = response.content!['application/json']!.schema!.required
        assert.deepEqual(required, ['result', 'id'], `${name} ${status} answers in the envelope`)
      }
    }
    const magic = document.paths['/auth/v1/magic']!
    assert.ok(magic.get!.responses['200']?.content?.['text/html'], 'opening the magic link answers a page')
    assert.ok(magic.post!.responses['303']?.description, 'the magic link form post documents its redirect')
    assert.deepEqual(Object.keys(magic.post!.requestBody!.content).sort(), [
      'application/json',
      'application/x-www-form-urlencoded',
    ])
    const stream = document.paths['/auth/v1/subscribe']!.get!.responses['200']!
    assert.ok(stream.content?.['text/event-stream'], 'the event stream is text/event-stream')
  },
)

forEachDialect('the document declares the credentials and which operations need them', async (t, dialect) => {
  const { document, url, config } = await startWithDocument(t, dialect)
  const schemes = document.components.securitySchemes
  assert.deepEqual(schemes.sessionCookie && [schemes.sessionCookie.in, schemes.sessionCookie.name], [
    'cookie',
    config.Sessions.CookieName,
  ])
  assert.deepEqual(schemes.bearer && [schemes.bearer.type, schemes.bearer.scheme], ['http', 'bearer'])
  assert.deepEqual(schemes.apiKey && [schemes.apiKey.in, schemes.apiKey.name], ['header', 'X-Api-Key'])
  assert.deepEqual(schemes.serviceAuth && [schemes.serviceAuth.in, schemes.serviceAuth.name], [
    'header',
    'X-Service-Auth',
  ])

  for (const [name, operation] of operationsOf(document)) {
    const security = operation.security ?? document.security ?? []
    for (const requirement of security) {
      for (const scheme of Object.keys(requirement)) assert.ok(schemes[scheme], `${name}: ${scheme} is declared`)
    }
    const labels = security.flatMap((requirement) => Object.keys(requirement)).sort()
    const path = name.split(' ')[1]!
    const expected = PUBLIC.includes(name)
      ? []
      : path.startsWith('/private/')
        ? ['serviceAuth']
        : ['apiKey', 'bearer', 'sessionCookie']
    assert.deepEqual(labels, expected, `${name} security`)
    // What the document says must hold: an anonymous caller is refused wherever credentials are needed.
    if (expected.length > 0 && !operation.requestBody) {
      const method = name.split(' ')[0]!.toUpperCase()
      const response = await fetch(`${url}${path.replace(/\{[^}]+\}/g, '1')}`, { method })
      assert.ok([401, 403].includes(response.status), `${name} refuses an anonymous caller (${response.status})`)
      const { error } = await json(response)
      const refusals = [errorCodes.SessionRequired, errorCodes.Unauthenticated, errorCodes.Forbidden]
      assert.ok(
        refusals.some(({ code }) => code === error.code),
        `${name}: ${error.code}`,
      )
    }
  }
})
