import swagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import { ErrorEnvelopeSchema } from './envelope.ts'

export interface OpenApiOptions {
  title: string
  description: string
  version: string
  /** Where the document is served, e.g. `/private/v1/openapi.json`. */
  path: string
  /** Describes the X-Service-Auth hop signature as the document's security scheme. */
  serviceAuth?: boolean
  /** Further security schemes (OpenAPI `components.securitySchemes`), e.g. the gateway's cookie and API key. */
  securitySchemes?: Record<string, object>
  /**
   * Credentials every operation needs unless its route schema sets `security` (OpenAPI `security`:
   * any one entry suffices; a route with `security: []` is public). Default: serviceAuth when set.
   */
  security?: Array<Record<string, string[]>>
}

interface ObjectSchema {
  properties?: Record<string, { default?: unknown }>
  required?: string[]
}

// A field with a default may be left out, though the handler's type sees it filled in.
function withDefaultsOptional(schema: unknown): unknown {
  const object = schema as ObjectSchema | undefined
  if (!object?.properties || !object.required) return schema
  const required = object.required.filter((name) => object.properties?.[name]?.default === undefined)
  return { ...object, required }
}

/**
 * Generates an OpenAPI 3.1 document from the schemas of every route registered after this call
 * (responses in the envelope, every failure as the error envelope) and serves it as JSON at `path`.
 * Call it before registering routes.
 */
export async function installOpenApi(app: FastifyInstance, options: OpenApiOptions) {
  const { title, description, version, path, serviceAuth = false, securitySchemes = {} } = options
  const security = options.security ?? (serviceAuth ? [{ serviceAuth: [] }] : undefined)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title, description, version },
      components: {
        schemas: { ErrorEnvelope: ErrorEnvelopeSchema as object },
        securitySchemes: {
          ...securitySchemes,
          ...(serviceAuth && {
            serviceAuth: {
              type: 'apiKey',
              in: 'header',
              name: 'X-Service-Auth',
              description:
                'Hop signature of the calling Atrium process: v1.<epoch ms>.<hex HMAC-SHA256> over the method, path with query, time and the identity headers (X-Crm, X-Scopes, X-KeyType, X-AppId, X-Pkey-Crm, X-Country, X-Project).',
            },
          }),
        },
      },
      ...(security && { security }),
    },
    transform({ schema, url }) {
      if (!schema) return { schema, url }
      const transformed = { ...schema } as Record<string, unknown>
      for (const part of ['body', 'querystring']) {
        if (transformed[part]) transformed[part] = withDefaultsOptional(transformed[part])
      }
      if (transformed.response) {
        transformed.response = {
          ...(transformed.response as object),
          default: { description: 'Any failure: the error envelope (docs/errors.md).', ...ErrorEnvelopeSchema },
        }
      }
      return { schema: transformed as typeof schema, url }
    },
  })
  app.get(path, { config: { envelope: false }, schema: { hide: true } }, async () => app.swagger())
}
