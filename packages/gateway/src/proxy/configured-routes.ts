import { ApiError, RouteFlags } from '@atrium/platform'
import type { Routes } from './routes.repository.ts'

/** A route from the `Proxy.Routes` setting; flags by name. */
export interface ConfiguredRoute {
  Prefix: string
  Upstream: string
  Flags: (keyof typeof RouteFlags)[]
}

/**
 * Adds each configured route whose prefix the route map lacks and returns the prefixes added. A
 * prefix already present is left as it is, so changes made with the CLI or the admin panel survive
 * restarts. A bad prefix or upstream fails the start with the setting named.
 */
export async function addConfiguredRoutes(routes: Routes, configured: readonly ConfiguredRoute[]): Promise<string[]> {
  const added: string[] = []
  for (const { Prefix, Upstream, Flags } of configured) {
    const flags = Flags.reduce((bits, name) => bits | RouteFlags[name], 0)
    try {
      const route = await routes.add({ prefix: Prefix, upstream: Upstream, flags })
      added.push(route.prefix)
    } catch (error) {
      if (error instanceof ApiError && error.name === 'Conflict') continue
      throw new Error(`Proxy.Routes: route ${Prefix} -> ${Upstream}: ${(error as Error).message}`)
    }
  }
  return added
}
