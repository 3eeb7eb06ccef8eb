import type { Service } from '@atrium/platform'
import { type Static, Type } from 'typebox'
import { OPERATOR_SCOPE } from '../admin/admin-shell.ts'
import { requireScope } from '../auth/caller.ts'
import type { GatewayConfig } from '../config.ts'
import { instanceUrls } from '../proxy/module-instances.ts'

/** The health endpoint every module serves without a signature (platform service.ts). */
const MODULE_HEALTH_PATH = '/private/v1/health'

const ModuleVersion = Type.Object({
  name: Type.String(),
  /** `up` when the module's health endpoint answered in time, with its version and build. */
  status: Type.Union([Type.Literal('up'), Type.Literal('down')]),
  /** The instance's base URL, when the module has several (each may run another build during an upgrade). */
  instance: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
  build: Type.Optional(Type.String()),
})
/** One process as operators see it: name, whether it answered, its version and build. */
export type ModuleVersion = Static<typeof ModuleVersion>

export interface ModuleVersionsOptions {
  config: Pick<GatewayConfig, 'Modules' | 'Readiness'>
  /** The gateway's own version and build, as its health endpoint shows them. */
  gateway: { version: string; build: string }
}

/** What operators read about the processes' versions: the API below and the panel's Settings page. */
export interface ModuleVersions {
  /** The gateway first, then every module in Modules in their order, each asked at once. */
  list(): Promise<ModuleVersion[]>
}

/** Asks one module's health endpoint for its version; `down` when it does not answer 2xx with one in time. */
async function askModule(name: string, baseUrl: string, timeoutMs: number, several: boolean): Promise<ModuleVersion> {
  const row = await askInstance(name, baseUrl, timeoutMs)
  return several ? { ...row, instance: baseUrl } : row
}

async function askInstance(name: string, baseUrl: string, timeoutMs: number): Promise<ModuleVersion> {
  try {
    const response = await fetch(new URL(MODULE_HEALTH_PATH, baseUrl), { signal: AbortSignal.timeout(timeoutMs) })
    const body = (await response.json()) as { result?: { version?: unknown; build?: unknown } }
    const { version, build } = body.result ?? {}
    if (!response.ok || typeof version !== 'string' || typeof build !== 'string') return { name, status: 'down' }
    return { name, status: 'up', version, build }
  } catch {
    return { name, status: 'down' }
  }
}

/** The versions of the gateway and its modules (each instance of one), each asked within Readiness.TimeoutMs. */
export function createModuleVersions({ config, gateway }: ModuleVersionsOptions): ModuleVersions {
  return {
    async list() {
      const modules = await Promise.all(
        Object.entries(config.Modules).flatMap(([name, setting]) => {
          const urls = instanceUrls(setting)
          return urls.map((url) => askModule(name, url, config.Readiness.TimeoutMs, urls.length > 1))
        }),
      )
      return [{ name: 'gateway', status: 'up', ...gateway }, ...modules]
    },
  }
}

/**
 * `GET /auth/v1/modules` for the admin scope: the version and build of the gateway and of every
 * module, so an operator sees which build of each process runs (docs/operations.md, "Releases and
 * rollback").
 */
export function installModuleVersions(app: Service, versions: ModuleVersions): void {
  app.get(
    '/auth/v1/modules',
    { schema: { response: { 200: Type.Object({ modules: Type.Array(ModuleVersion) }) } } },
    async (request) => {
      requireScope(request.caller, OPERATOR_SCOPE, 'Module versions are read with the admin scope.')
      return { modules: await versions.list() }
    },
  )
}
