import { Ajv, type ErrorObject, type Options } from 'ajv'
import addFormats from 'ajv-formats'
import fastJsonStringify from 'fast-json-stringify'
import type { FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify'
import { ApiError } from './errors.ts'

const shared: Options = { useDefaults: true, removeAdditional: false, allErrors: false }

// JSON bodies are validated as sent: coercion would turn `null` into '' or 0, and the patch rule
// (spec: "null means do not update") depends on seeing null. Query strings, path parameters and
// headers arrive as text, so they are coerced to the declared types.
const bodies = addFormats.default(new Ajv({ ...shared, coerceTypes: false }))
const textParts = addFormats.default(new Ajv({ ...shared, coerceTypes: 'array' }))

/**
 * Compiles a schema once per process and meaning: a service built again in the same process (the
 * tests build one per test, and build many route schemas anew each time) reuses what it compiled.
 * Keyed by the schema's JSON, which is all a compiler reads of it.
 */
function compiledOnce<F>(compile: (schema: object) => F): (schema: object) => F {
  const compiled = new Map<string, F>()
  return (schema) => {
    const key = JSON.stringify(schema)
    let found = compiled.get(key)
    if (found === undefined) {
      found = compile(schema)
      compiled.set(key, found)
    }
    return found
  }
}

const bodyValidator = compiledOnce((schema) => bodies.compile(schema))
const textValidator = compiledOnce((schema) => textParts.compile(schema))

/** Fastify's validator compiler for every Atrium service. */
export const compileValidator: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyValidator : textValidator)(schema as object)

const serializer = compiledOnce((schema) => fastJsonStringify(schema as Parameters<typeof fastJsonStringify>[0]))

/**
 * Fastify's serializer compiler for every Atrium service: fast-json-stringify, as Fastify's own
 * (no shared schemas are added), compiled once per response schema and process.
 */
export const compileSerializer: FastifySerializerCompiler<unknown> = ({ schema }) => serializer(schema as object)

/**
 * Validates a parsed query string against a route's querystring schema as Fastify does (text
 * coerced to the declared types), for requests answered at the front door: throws the same
 * InvalidRequest the envelope gives a Fastify validation failure.
 */
export function compileQueryCheck(schema: object): (query: Record<string, unknown>) => void {
  const validate = textParts.compile(schema)
  return function checkQuery(query) {
    if (validate(query)) return
    const details = (validate.errors ?? []).map((issue: ErrorObject) => ({
      in: 'querystring',
      path: issue.instancePath || '/',
      message: issue.message ?? 'is invalid',
    }))
    const first = details[0]
    throw new ApiError('InvalidRequest', first ? `${first.in}${first.path} ${first.message}` : undefined, details)
  }
}
