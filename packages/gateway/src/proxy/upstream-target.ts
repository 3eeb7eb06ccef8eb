import { ApiError } from '@atrium/platform'
import type { ModuleDirectory, ModuleInstances } from './module-instances.ts'

/** Where a route's requests go: the origin of the module and a base path put before the request path. */
export interface UpstreamTarget {
  /** The origin requests are built with: a URL upstream's, or the module's first instance's. */
  origin: string
  basePath: string
  /** The module's instances, which the request is sent to (see module-instances.ts); none for a URL upstream. */
  instances?: ModuleInstances
}

/**
 * Resolves a route's upstream (a module name from the Modules setting, or an absolute URL) to a
 * target, once per distinct upstream. An upstream that names no configured module is a
 * BadGateway: the route exists but nothing serves it here.
 */
export function createUpstreamTargets(modules: ModuleDirectory) {
  const resolved = new Map<string, UpstreamTarget>()
  return function upstreamTarget(upstream: string): UpstreamTarget {
    let target = resolved.get(upstream)
    if (target) return target
    const isUrl = /^https?:\/\//i.test(upstream)
    const instances = isUrl ? undefined : modules.get(upstream)
    const base = isUrl ? upstream : instances?.url
    if (base === undefined) throw new ApiError('BadGateway', `module ${upstream} is not configured on this gateway`)
    const url = new URL(base)
    target = { origin: url.origin, basePath: url.pathname.replace(/\/+$/, ''), instances }
    if (resolved.size > 1000) resolved.clear()
    resolved.set(upstream, target)
    return target
  }
}

/**
 * A request target of only these characters comes out of the WHATWG URL parser as it went in:
 * nothing in it is encoded, and without a dot, a percent sign or a backslash it holds no dot
 * segment to resolve.
 */
const PLAIN_TARGET = /^\/[A-Za-z0-9\-_~!$&()*+,;=:@/?]*$/

/**
 * The path and query a module receives for a request target: the base path and the target as the
 * WHATWG URL parser makes them (dot segments resolved, characters encoded), so the path signed is
 * exactly the path sent. Concatenated, never resolved against the origin: resolved, `//host/x`
 * would name another host. A plain target (most of them) skips the parser.
 */
export function upstreamPath(target: UpstreamTarget, requestUrl: string): string {
  if (PLAIN_TARGET.test(requestUrl) && !requestUrl.endsWith('?')) return target.basePath + requestUrl
  const url = new URL(target.origin + target.basePath + requestUrl)
  return url.pathname + url.search
}
