import { readFileSync } from 'node:fs'
import { type Static, type TObject, type TSchema, Type } from 'typebox'
import Value from 'typebox/value'
import { metricsSettings } from './metrics.ts'
import { readinessTimeoutSetting } from './readiness.ts'

/**
 * Settings are declared once per process as a TypeBox object whose leaves carry a `description`
 * and a `default`. They come from a JSON config file and from environment variables named by the
 * setting's path joined with `__` (`WebPush.Enabled` is `WebPush__Enabled`), the environment
 * winning. Loading validates everything at once and returns a frozen object.
 */

/** Thrown when settings are invalid; `problems` lists every one of them. */
export class ConfigError extends Error {
  readonly problems: string[]

  constructor(source: string, problems: string[]) {
    super(`Invalid ${source} configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`)
    this.name = 'ConfigError'
    this.problems = problems
  }
}

/** One documented leaf setting of a schema. */
export interface SettingDescription {
  name: string
  env: string
  type: string
  default: unknown
  description: string
}

interface SchemaNode {
  type?: string
  properties?: Record<string, SchemaNode>
  enum?: unknown[]
  const?: unknown
  anyOf?: SchemaNode[]
  default?: unknown
  description?: string
}

/** Lists every leaf setting of a config schema, in declaration order, for docs and env mapping. */
export function describeSettings(schema: TObject, prefix: string[] = []): SettingDescription[] {
  const settings: SettingDescription[] = []
  for (const [key, node] of Object.entries((schema as SchemaNode).properties ?? {})) {
    const path = [...prefix, key]
    if (node.type === 'object' && node.properties) {
      settings.push(...describeSettings(node as TObject, path))
      continue
    }
    settings.push({
      name: path.join('.'),
      env: path.join('__'),
      type: typeName(node),
      default: node.default,
      description: node.description ?? '',
    })
  }
  return settings
}

function typeName(node: SchemaNode): string {
  if (node.anyOf) return node.anyOf.map(typeName).join(' | ')
  if (node.const !== undefined) return JSON.stringify(node.const)
  if (node.enum) return node.enum.map((value) => JSON.stringify(value)).join(' | ')
  return node.type ?? 'any'
}

function nodeAt(schema: TSchema, path: string[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = schema as SchemaNode
  for (const key of path) node = node?.properties?.[key]
  return node
}

function leafType(schema: TObject, path: string[]): string | undefined {
  const node = nodeAt(schema, path)
  if (node?.anyOf) return node.anyOf.every((option) => option.const !== undefined) ? 'string' : 'json'
  return node?.type
}

function coerceEnv(type: string | undefined, raw: string): { value?: unknown; problem?: string } {
  switch (type) {
    case 'boolean':
      if (/^(true|1|yes|on)$/i.test(raw)) return { value: true }
      if (/^(false|0|no|off)$/i.test(raw)) return { value: false }
      return { problem: `expected true or false, got ${JSON.stringify(raw)}` }
    case 'integer':
    case 'number': {
      const value = Number(raw)
      return raw.trim() !== '' && Number.isFinite(value)
        ? { value }
        : { problem: `expected a number, got ${JSON.stringify(raw)}` }
    }
    case 'array':
    case 'object':
    case 'json':
      try {
        return { value: JSON.parse(raw) }
      } catch {
        return { problem: `expected JSON, got ${JSON.stringify(raw)}` }
      }
    default:
      return { value: raw }
  }
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown) {
  let node = target
  for (const key of path.slice(0, -1)) {
    const child = node[key]
    node[key] = child !== null && typeof child === 'object' && !Array.isArray(child) ? { ...child } : {}
    node = node[key] as Record<string, unknown>
  }
  node[path.at(-1)!] = value
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}

// Each top-level setting is checked on its own: TypeBox stops collecting after a few errors per call.
function schemaProblems(schema: TObject, config: Record<string, unknown>): string[] {
  const properties = (schema as SchemaNode).properties ?? {}
  const problems = Object.keys(config)
    .filter((key) => !(key in properties))
    .map((key) => `${key}: unknown setting`)
  for (const [key, node] of Object.entries(properties)) {
    const errors = [...Value.Errors(node as TSchema, config[key])]
    const unions = new Set(errors.filter((error) => error.keyword === 'anyOf').map((error) => error.instancePath))
    for (const error of errors) {
      const inner = error.instancePath.split('/').filter(Boolean)
      const at = [key, ...inner].join('.')
      if (error.keyword === 'boolean' || (error.keyword === 'const' && unions.has(error.instancePath))) continue
      if (error.keyword === 'additionalProperties') {
        const unknown = (error.params as { additionalProperties?: string[] }).additionalProperties ?? []
        problems.push(...unknown.map((name) => `${at}.${name}: unknown setting`))
      } else if (error.keyword === 'anyOf') {
        problems.push(`${at}: must be one of ${typeName(nodeAt(node as TSchema, inner) ?? {})}`)
      } else {
        problems.push(`${at}: ${error.message}`)
      }
    }
  }
  return problems
}

export interface LoadConfigOptions<T> {
  /** Name used in error messages, e.g. `gateway`. */
  source: string
  /** Values from the config file (already parsed). */
  file?: unknown
  /** Environment variables; only names that match a setting are read. */
  env?: Record<string, string | undefined>
  /** Checks across settings; returns problems in the same `Name: problem` form. */
  refine?: (config: T) => string[]
}

/** Validates settings from file and environment against the schema; throws one ConfigError listing all problems. */
export function loadConfig<S extends TObject>(schema: S, options: LoadConfigOptions<Static<S>>): Readonly<Static<S>> {
  const problems: string[] = []
  const file = options.file ?? {}
  if (typeof file !== 'object' || Array.isArray(file))
    throw new ConfigError(options.source, ['the config file must hold a JSON object'])
  const merged = structuredClone(file) as Record<string, unknown>

  for (const setting of describeSettings(schema)) {
    const raw = options.env?.[setting.env]
    if (raw === undefined) continue
    const path = setting.name.split('.')
    const { value, problem } = coerceEnv(leafType(schema, path), raw)
    if (problem) problems.push(`${setting.name} (environment ${setting.env}): ${problem}`)
    else setPath(merged, path, value)
  }

  const withDefaults = Value.Default(schema, merged) as Static<S>
  problems.push(...schemaProblems(schema, withDefaults as Record<string, unknown>))
  if (problems.length === 0 && options.refine) problems.push(...options.refine(withDefaults))
  if (problems.length > 0) throw new ConfigError(options.source, problems)
  return deepFreeze(withDefaults)
}

/**
 * Reads the deployment config file: a JSON object with one section per process
 * (`{"gateway": {...}, "chat": {...}}`). Returns the named section, or {} without a file.
 */
export function readConfigSection(path: string | undefined, section: string): unknown {
  if (!path) return {}
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new ConfigError(section, [`config file ${path}: ${(error as Error).message}`])
  }
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>
    return parsed?.[section] ?? {}
  } catch (error) {
    throw new ConfigError(section, [`config file ${path} is not valid JSON: ${(error as Error).message}`])
  }
}

/** Settings every Atrium process has. */
export function commonSettings(defaults: { host: string; port: number }) {
  return {
    Host: Type.String({ default: defaults.host, minLength: 1, description: 'Address to listen on.' }),
    Port: Type.Integer({
      default: defaults.port,
      minimum: 0,
      maximum: 65535,
      description: 'TCP port to listen on (0 picks a free port).',
    }),
    NodeNumber: Type.Integer({
      default: 0,
      minimum: 0,
      maximum: 31,
      description: 'Timetick node number, unique among the instances of this module.',
    }),
    PlatformDevHost: Type.String({
      default: '',
      description: 'The one platform development host accepted besides localhost by every build (empty: none).',
    }),
    ServiceSecret: Type.String({
      default: '',
      minLength: 32,
      description:
        'Inter-service secret shared by the gateway and every module (at least 32 characters); signs each hop. `npm start` makes one per run.',
    }),
    LogLevel: Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
      { default: 'info', description: 'Log level (pino).' },
    ),
    LogFormat: Type.Union([Type.Literal('json'), Type.Literal('pretty')], {
      default: 'json',
      description:
        'Log lines: `json` (one JSON object a line, for log collectors) or `pretty` (one short line per request, readable warnings; `npm start` sets it).',
    }),
    // The metrics listener of each process sits 1000 above its service port, so the defaults of
    // processes on one machine never collide (docs/operations.md, "Metrics").
    Metrics: metricsSettings(defaults.port === 0 ? 0 : defaults.port + 1000),
    Readiness: Type.Object({ TimeoutMs: readinessTimeoutSetting }, { default: {}, additionalProperties: false }),
  }
}

/** The static type of a schema's settings, re-exported so processes need not import TypeBox types. */
export type Settings<S extends TSchema> = Static<S>
