import { Ajv, type Options } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'

const shared: Options = { useDefaults: true, removeAdditional: false, allErrors: false }

// JSON bodies are validated as sent: coercion would turn `null` into '' or 0, and the patch rule
// (spec: "null means do not update") depends on seeing null. Query strings, path parameters and
// headers arrive as text, so they are coerced to the declared types.
const bodies = addFormats.default(new Ajv({ ...shared, coerceTypes: false }))
const textParts = addFormats.default(new Ajv({ ...shared, coerceTypes: 'array' }))

/** Fastify's validator compiler for every Atrium service. */
export const compileValidator: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodies : textParts).compile(schema as object)
