import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify'
import { type TSchema, Type } from 'typebox'
import { ApiError, type ErrorName, errorCodes } from './errors.ts'
import type { ReplyView } from './front-door.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set false on routes that answer raw bodies (streams, files, documents) instead of an envelope. */
    envelope?: boolean
  }
}

/** The failure half of the response envelope: `{error: {code, message, details?}, id}`. */
export interface ErrorEnvelope {
  error: { code: number; message: string; details?: unknown }
  id: string
}

const envelopeSchemas = new WeakSet<TSchema>()

/** The response schema of an enveloped route whose result has the given schema. */
export function Envelope<T extends TSchema>(result: T) {
  const schema = Type.Object({ result, id: Type.String() })
  envelopeSchemas.add(schema)
  return schema
}

/** Schema of an error envelope, for OpenAPI documents. */
export const ErrorEnvelopeSchema = Type.Object({
  error: Type.Object({ code: Type.Integer(), message: Type.String(), details: Type.Optional(Type.Unknown()) }),
  id: Type.String(),
})

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Request ids echo a well-formed client `X-Request-Id` and are generated otherwise. */
export function requestIdFor(request: { headers: Record<string, string | string[] | undefined> }): string {
  const given = request.headers['x-request-id']
  return typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID()
}

/** Builds an error envelope for the named code. */
export function errorEnvelope(name: ErrorName, id: string, message?: string, details?: unknown): ErrorEnvelope {
  const error: ErrorEnvelope['error'] = { code: errorCodes[name].code, message: message ?? errorCodes[name].meaning }
  if (details !== undefined) error.details = details
  return { error, id }
}

/** Answers with an error envelope; serialised here so response hooks never wrap it again. */
export function sendError<R extends ReplyView>(reply: R, error: ApiError): R {
  const body: ErrorEnvelope = { error: { code: error.code, message: error.message }, id: reply.request.id }
  if (error.details !== undefined) body.error.details = error.details
  reply.code(error.status).type('application/json; charset=utf-8').send(JSON.stringify(body))
  return reply
}

/** Translates anything thrown in a request into the ApiError the caller is allowed to see. */
export function toApiError(error: FastifyError | Error): ApiError {
  if (error instanceof ApiError) return error
  const fastifyError = error as FastifyError
  if (fastifyError.validation) {
    const details = fastifyError.validation.map((issue) => ({
      in: fastifyError.validationContext ?? 'request',
      path: issue.instancePath || '/',
      message: issue.message ?? 'is invalid',
    }))
    const first = details[0]
    return new ApiError('InvalidRequest', first ? `${first.in}${first.path} ${first.message}` : undefined, details)
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('PayloadTooLarge')
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('UnsupportedMediaType')
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('MalformedJson')
  }
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) return new ApiError('MalformedJson')
  const status = fastifyError.statusCode ?? 500
  if (status === 404) return new ApiError('NotFound')
  // Fastify's own 4xx errors describe the request, never our internals, so their text may be shown.
  if (status >= 400 && status < 500) return new ApiError('BadRequest', error.message)
  return new ApiError('Internal')
}

/**
 * Envelope handling for a service: handlers return the result and declare its schema; results are
 * wrapped as `{result, id}` (the declared 2xx schemas are wrapped to match), every failure becomes
 * `{error: {code, message}, id}` with a fitting status, unknown routes answer NotFound, and the
 * request id goes back in `X-Request-Id`. Internal messages are logged with the request id and
 * never sent. Installed before any route, so it applies to all of them.
 */
export function installEnvelope(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { response?: Record<string, TSchema> } | undefined
    if (route.config?.envelope === false || !schema?.response) return
    // Route schemas are often shared constants (and the automatic HEAD route reuses its GET
    // route's), so the route gets new objects and an envelope schema is never wrapped twice.
    const response: Record<string, TSchema> = {}
    for (const [status, result] of Object.entries(schema.response)) {
      response[status] = /^2/.test(status) && !envelopeSchemas.has(result) ? Envelope(result) : result
    }
    route.schema = { ...schema, response }
  })

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })

  app.addHook('preSerialization', async (request: FastifyRequest, reply, payload) => {
    if (request.routeOptions.config.envelope === false || reply.statusCode >= 400) return payload
    return { result: payload, id: request.id }
  })

  app.setErrorHandler(function handleError(error: FastifyError, request, reply) {
    const apiError = toApiError(error)
    if (apiError.status >= 500) request.log.error({ err: error }, 'request failed')
    else request.log.info({ code: apiError.code }, apiError.message)
    return sendError(reply, apiError)
  })

  app.setNotFoundHandler(function handleNotFound(request, reply) {
    return sendError(reply, new ApiError('NotFound', `No route for ${request.method} ${request.url.split('?')[0]}`))
  })
}

/**
 * Answers HTTP parse failures (before any route runs) with an envelope error, so even a request
 * with oversized or broken headers gets `{error, id}`; used as Fastify's clientErrorHandler.
 */
export function handleClientError(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy()
    return
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW'
  const name: ErrorName = tooLarge ? 'HeadersTooLarge' : 'BadRequest'
  const { status } = errorCodes[name]
  const body = JSON.stringify(errorEnvelope(name, randomUUID()))
  socket.end(
    `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  )
}
