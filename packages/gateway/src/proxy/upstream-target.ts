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

/**
 * The request path decoded for matching (modules' routers match on the decoded path, so the
 * route map must too), with repeated slashes merged as many servers merge them (`//locked/x` is
 * matched as `/locked/x`); BadRequest for a path that is not valid percent-encoding or that has
 * dot segments, backslashes or NUL, which some servers resolve into another path.
 */
export function decodedPath(url: string): string {
  const query = url.indexOf('?')
  const raw = query === -1 ? url : url.slice(0, query)
  let path = raw
  if (raw.includes('%')) {
    try {
      path = decodeURIComponent(raw)
    } catch {
      throw new ApiError('BadRequest', 'the request path is not valid percent-encoding')
    }
  }
  if (/\/\.\.?(\/|$)|\\|\0/.test(path)) {
    throw new ApiError('BadRequest', 'the request path must not contain dot segments or backslashes')
  }
  return path.includes('//') ? path.replace(/\/{2,}/g, '/') : path
}
