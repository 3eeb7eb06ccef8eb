import { ApiError } from '@atrium/platform'
import type { FastifyRequest } from 'fastify'
import { Agent, type Dispatcher } from 'undici'
import type { Caller } from '../auth/caller.ts'
import type { GatewayConfig } from '../config.ts'
import { createClientAddress } from './client-address.ts'
import { upstreamError } from './forward.ts'
import { createForwardedHeaders, type ForwardedHeadersOptions } from './forwarded-headers.ts'
import type { ModuleDirectory } from './module-instances.ts'
import type { Routes } from './routes.repository.ts'
import { createUpstreamTargets } from './upstream-target.ts'

/** One call the gateway makes to a module on a caller's behalf. */
export interface ModuleCall {
  method: 'GET' | 'POST'
  /** The path as the client would request it through the gateway, e.g. `/wallet/v1/balance`. */
  path: string
  query?: Record<string, string | number | undefined>
  /** A JSON body (POST). */
  body?: unknown
  /** Further request headers, e.g. Idempotency-Key. */
  headers?: Record<string, string>
}

/** A module's answer: its status, headers and the parsed JSON body (undefined when not JSON). */
export interface ModuleAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: unknown
}

export interface ModuleCallerOptions extends Omit<ForwardedHeadersOptions, 'project'> {
  routes: Routes
  /** The modules and their instances: a call goes to one of them, as a proxied request does. */
  modules: ModuleDirectory
  settings: GatewayConfig['Proxy']
  /** Largest answer body read; a longer one is a BadGateway. */
  maxAnswerBytes: number
}

/**
 * Returns the function the gateway calls a module with on an authenticated caller's behalf (the
 * MCP tools): the proxy's own path, not a way around it. The route map names the module (no
 * route: McpModuleNotRouted), the Modules setting its address, and the request carries the
 * identity headers set from the caller and the signed hop, built by the same code as a proxied
 * request's (forwarded-headers.ts); no header of the client's request is passed on. The answer is
 * read whole, up to `maxAnswerBytes`.
 */
export function createModuleCaller(options: ModuleCallerOptions) {
  const { routes, settings } = options
  const upstreamTarget = createUpstreamTargets(options.modules)
  const clientAddress = createClientAddress(settings.TrustedProxies)
  const forwardedHeaders = createForwardedHeaders({ ...options, project: settings.Project })
  const agent = new Agent({
    connections: settings.Connections,
    keepAliveTimeout: settings.KeepAliveMs,
    keepAliveMaxTimeout: settings.KeepAliveMs,
    headersTimeout: settings.ResponseTimeoutMs,
    bodyTimeout: settings.BodyTimeoutMs,
    connect: { timeout: settings.ConnectTimeoutMs, rejectUnauthorized: true },
  })

  async function callModule(request: FastifyRequest, caller: Caller, call: ModuleCall): Promise<ModuleAnswer> {
    const route = routes.table.match(call.path)
    if (!route) {
      const module = call.path.split('/')[1] ?? ''
      throw new ApiError(
        'McpModuleNotRouted',
        `the ${module} module is not routed on this gateway (no route for ${call.path})`,
      )
    }
    const target = upstreamTarget(route.upstream)
    const search = new URLSearchParams()
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) search.set(name, String(value))
    }
    const query = search.size > 0 ? `?${search}` : ''
    const url = new URL(target.origin + target.basePath + call.path + query)
    const path = url.pathname + url.search
    const body = call.body === undefined ? undefined : JSON.stringify(call.body)
    const inbound: Record<string, string> = { accept: 'application/json', ...call.headers }
    if (body !== undefined) inbound['content-type'] = 'application/json'
    const address = clientAddress(request.socket.remoteAddress, request.headers['x-forwarded-for'])
    const headers = forwardedHeaders(request, {
      caller,
      address,
      appId: caller.appId,
      url: path,
      method: call.method,
      inbound,
    })

    let answer: Dispatcher.ResponseData
    try {
      const dispatcher = target.instances?.via(agent) ?? agent
      answer = await dispatcher.request({ origin: target.origin, path, method: call.method, headers, body })
    } catch (error) {
      throw upstreamError(error as Error)
    }
    const text = await readCapped(answer, options.maxAnswerBytes)
    let parsed: unknown
    try {
      parsed = text === '' ? undefined : JSON.parse(text)
    } catch {
      parsed = undefined
    }
    return { status: answer.statusCode, headers: answer.headers, body: parsed }
  }

  return { callModule, close: () => agent.close() }
}

/** The answer's body as text, refused (BadGateway) past `limit` bytes. */
async function readCapped(answer: Dispatcher.ResponseData, limit: number): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of answer.body) {
      size += chunk.length
      if (size > limit) {
        answer.body.destroy()
        throw new ApiError('BadGateway', `the module answered more than ${limit} bytes`)
      }
      chunks.push(chunk)
    }
  } catch (error) {
    throw error instanceof ApiError ? error : upstreamError(error as Error)
  }
  return Buffer.concat(chunks).toString('utf8')
}

export type ModuleCaller = ReturnType<typeof createModuleCaller>
