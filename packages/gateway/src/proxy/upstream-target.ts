import { ApiError } from '@atrium/platform'

/** Where a route's requests go: the origin of the module and a base path put before the request path. */
export interface UpstreamTarget {
  origin: string
  basePath: string
}

/**
 * Resolves a route's upstream (a module name from the Modules setting, or an absolute URL) to a
 * target, once per distinct upstream. An upstream that names no configured module is a
 * BadGateway: the route exists but nothing serves it here.
 */
export function createUpstreamTargets(modules: Readonly<Record<string, string>>) {
  const resolved = new Map<string, UpstreamTarget>()
  return function upstreamTarget(upstream: string): UpstreamTarget {
    let target = resolved.get(upstream)
    if (target) return target
    const base = /^https?:\/\//i.test(upstream) ? upstream : modules[upstream]
    if (base === undefined) throw new ApiError('BadGateway', `module ${upstream} is not configured on this gateway`)
    const url = new URL(base)
    target = { origin: url.origin, basePath: url.pathname.replace(/\/+$/, '') }
    if (resolved.size > 1000) resolved.clear()
    resolved.set(upstream, target)
    return target
  }
}
