import { ApiError, errorCodes } from '@atrium/platform'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isAuthenticated } from '../auth/caller.ts'
import type { GatewayConfig } from '../config.ts'
import type { ModuleCaller } from '../proxy/module-call.ts'
import type { McpGrants } from './grants.repository.ts'
import type { McpAudit } from './mcp-audit.repository.ts'
import { createMcpServer } from './mcp-server.ts'

export interface McpPluginOptions {
  grants: McpGrants
  audit: McpAudit
  modules: ModuleCaller
  settings: GatewayConfig['Mcp']
  /** PublicOrigin: the gateway's own pages may call the endpoint from a browser. */
  publicOrigin: string
  /** The gateway's version, announced in initialize. */
  version: string
}

// JSON-RPC 2.0 error codes (§5.1); -32001 is ours, in the range left to servers.
const PARSE_ERROR = -32700
const INVALID_REQUEST = -32600
const INVALID_PARAMS = -32602
const UNAUTHORIZED = -32001
const SERVER_ERROR = -32000

type JsonRpcId = string | number | null

function sendJsonRpcError(
  reply: FastifyReply,
  status: number,
  code: number,
  message: string,
  id: JsonRpcId = null,
  data?: unknown,
) {
  const error = data === undefined ? { code, message } : { code, message, data }
  return reply
    .code(status)
    .header('content-type', 'application/json')
    .header('cache-control', 'no-store')
    .send(JSON.stringify({ jsonrpc: '2.0', error, id }))
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Why a parsed body is not one JSON-RPC 2.0 message the endpoint takes, as [code, message], or
 * undefined when it is. Batches are refused: MCP 2025-06-18 removed them, and one call per request
 * keeps each tools/call its own audited, rate-limited request.
 */
function messageProblem(message: unknown): [number, string] | undefined {
  if (Array.isArray(message))
    return [INVALID_REQUEST, 'batches are not supported: send one JSON-RPC message per request']
  if (!isObject(message)) return [INVALID_REQUEST, 'the request must be a JSON-RPC 2.0 object']
  if (message.jsonrpc !== '2.0') return [INVALID_REQUEST, 'jsonrpc must be "2.0"']
  if ('id' in message && typeof message.id !== 'string' && typeof message.id !== 'number') {
    return [INVALID_REQUEST, 'id must be a string or a number']
  }
  if (!('method' in message)) {
    // A response to a server request; this server sends none, and the SDK accepts it with 202.
    return 'id' in message && ('result' in message || 'error' in message)
      ? undefined
      : [INVALID_REQUEST, 'a request needs a method']
  }
  if (typeof message.method !== 'string' || message.method === '') return [INVALID_REQUEST, 'method must be a string']
  if ('params' in message && !isObject(message.params)) return [INVALID_PARAMS, 'params must be an object']
  if (message.method === 'tools/call') {
    const params = (message.params ?? {}) as Record<string, unknown>
    if (typeof params.name !== 'string') return [INVALID_PARAMS, 'tools/call needs params.name, a string']
    if ('arguments' in params && !isObject(params.arguments))
      return [INVALID_PARAMS, 'params.arguments must be an object']
  }
  return undefined
}

function idOf(message: unknown): JsonRpcId {
  const id = isObject(message) ? message.id : undefined
  return typeof id === 'string' || typeof id === 'number' ? id : null
}

/** The JSON-RPC error for a failure before the MCP server ran (credentials, body size, the gateway's checks). */
function answerFailure(error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof ApiError) {
    if (error.status === 401) {
      reply.header('www-authenticate', 'Bearer realm="atrium", error="invalid_token"')
      return sendJsonRpcError(reply, 401, UNAUTHORIZED, error.message, null, { code: error.code })
    }
    return sendJsonRpcError(reply, error.status, SERVER_ERROR, error.message, null, { code: error.code })
  }
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return sendJsonRpcError(
      reply,
      413,
      INVALID_REQUEST,
      `the request body is larger than ${request.routeOptions.bodyLimit} bytes`,
    )
  }
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500
  if (status === 500) request.log.error({ err: error }, 'MCP request failed')
  return sendJsonRpcError(
    reply,
    status,
    status === 500 ? -32603 : INVALID_REQUEST,
    status === 500 ? 'internal error' : error.message,
  )
}

/**
 * The MCP endpoint, POST /auth/v1/mcp (docs/mcp.md): JSON-RPC 2.0 over the Streamable HTTP
 * transport of the official SDK, stateless (a server and transport per request, no MCP session),
 * with JSON answers rather than event streams. The gateway's authentication hook has set the
 * caller; anonymous callers get 401 with WWW-Authenticate. Bodies are parsed here so that bad
 * JSON, wrong envelopes and oversized bodies get JSON-RPC errors, not the gateway's envelope.
 */
export default async function mcpPlugin(app: FastifyInstance, options: McpPluginOptions) {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser(
    '*',
    { parseAs: 'string', bodyLimit: options.settings.MaxBodyBytes },
    (_request, body, done) => done(null, body),
  )
  app.setErrorHandler(function mcpError(error: FastifyError, request, reply) {
    return answerFailure(error, request, reply)
  })

  const route = { config: { envelope: false }, schema: { hide: true } }
  const allowedOrigins = new Set([options.publicOrigin, ...options.settings.AllowedOrigins])

  // The Streamable HTTP transport requires every request's Origin to be checked, whatever its
  // credentials (MCP 2025-06-18, "Security Warning"): a page on another origin, or a DNS-rebound
  // name, must not reach tools with a key a local assistant sends. No Origin: not a browser.
  app.addHook('onRequest', async function mcpOrigin(request, reply) {
    const origin = request.headers.origin
    if (origin === undefined || allowedOrigins.has(origin)) return
    return sendJsonRpcError(
      reply,
      403,
      SERVER_ERROR,
      `requests from origin ${JSON.stringify(origin).slice(0, 200)} are not allowed: only ${options.publicOrigin} and Mcp.AllowedOrigins`,
      null,
      { code: errorCodes.CsrfRejected.code },
    )
  })

  app.post('/mcp', { ...route, bodyLimit: options.settings.MaxBodyBytes }, async function mcp(request, reply) {
    if (!isAuthenticated(request.caller)) {
      reply.header('www-authenticate', 'Bearer realm="atrium"')
      return sendJsonRpcError(
        reply,
        401,
        UNAUTHORIZED,
        'sign in first: send an API key (Authorization: Bearer atr_… or X-Api-Key) or a session token',
        null,
        { code: errorCodes.SessionRequired.code },
      )
    }
    // A body that is not JSON by its type is left to the transport, which answers 415.
    const json = /^application\/(.+\+)?json\s*(;|$)/i.test(request.headers['content-type'] ?? '')
    let message: unknown = null
    if (json) {
      try {
        message = JSON.parse(String(request.body ?? ''))
      } catch {
        return sendJsonRpcError(reply, 400, PARSE_ERROR, 'parse error: the body is not valid JSON')
      }
      const problem = messageProblem(message)
      if (problem) return sendJsonRpcError(reply, 400, problem[0], problem[1], idOf(message))
    }

    const server = createMcpServer(options, request)
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    // The transport writes the answer itself; headers the gateway's hooks set so far go with it.
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) reply.raw.setHeader(name, value as string | number | string[])
    }
    reply.hijack()
    reply.raw.on('close', () => {
      transport.close().catch(() => {})
      server.close().catch(() => {})
    })
    try {
      await server.connect(transport)
      await transport.handleRequest(request.raw, reply.raw, message)
    } catch (error) {
      request.log.error({ err: error }, 'MCP transport failed')
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' })
        reply.raw.end(
          JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'internal error' }, id: idOf(message) }),
        )
      }
    }
  })

  // Stateless: no event stream to resume (GET) and no session to end (DELETE), as the SDK's examples answer.
  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('allow', 'POST')
    return sendJsonRpcError(reply, 405, SERVER_ERROR, 'method not allowed: POST JSON-RPC messages to this path')
  }
  app.get('/mcp', route, notAllowed)
  app.delete('/mcp', route, notAllowed)
}
