import swagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import { ErrorEnvelopeSchema } from './envelope.ts'

export interface OpenApiOptions {
  title: string
  description: string
  version: string
  /** Where the document is served, e.g. `/private/v1/openapi.json`. */
  path: string
}

/**
 * Generates an OpenAPI 3 document from the route schemas of every route registered after this
 * call (responses already in the envelope) and serves it as JSON at `path`. Call it before
 * registering routes.
 */
export async function installOpenApi(app: FastifyInstance, { title, description, version, path }: OpenApiOptions) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title, description, version },
      components: { schemas: { ErrorEnvelope: ErrorEnvelopeSchema as object } },
    },
  })
  app.get(path, { config: { envelope: false }, schema: { hide: true } }, async () => app.swagger())
}
