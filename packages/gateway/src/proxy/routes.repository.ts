import { ApiError, allFlags, RouteFlags, type TimetickGenerator } from '@atrium/platform'
import type { Kysely } from 'kysely'
import type { GatewayDatabase } from '../db/schema.ts'

/** A route_map row: requests whose path is `prefix` or lies under it go to `upstream`. */
export interface Route {
  id: number
  /** Canonical form: starts and ends with `/`, e.g. `/msg/` (or `/` for everything not matched otherwise). */
  prefix: string
  /** Module name from the Modules setting, or an absolute http(s) base URL. */
  upstream: string
  /** RouteFlags bits. */
  flags: number
}

export interface NewRoute {
  prefix: string
  upstream: string
  flags?: number
}

export interface RoutesOptions {
  /** Module names routes may point to; when given, an unknown module name is refused. */
  modules?: Iterable<string>
}

/** First path segments that belong to the gateway (/auth/) or to modules' internal API (/private/). */
const RESERVED_SEGMENTS = new Set(['auth', 'private'])
// No `;`: requests are matched with their `;` path parameters removed, so a prefix with one could never match.
const SEGMENT = /^[A-Za-z0-9._~!$&'()*+,=:@-]+$/
const MODULE_NAME = /^[a-z][a-z0-9-]*$/
const ROUTE_FLAGS = allFlags(RouteFlags)

/** The first segment of a path, lower-cased, ignoring repeated leading slashes. */
function firstSegment(path: string): string {
  const start = path.search(/[^/]/)
  if (start === -1) return ''
  const end = path.indexOf('/', start)
  return path.slice(start, end === -1 ? undefined : end).toLowerCase()
}

/** True when a (decoded) request path lies under /auth/ or /private/, which no route may expose. */
export function isReservedPath(path: string): boolean {
  return RESERVED_SEGMENTS.has(firstSegment(path))
}

/** The canonical prefix (`/a/b/`, lower case), or an InvalidRequest naming what is wrong. */
export function canonicalPrefix(text: string): string {
  if (typeof text !== 'string' || !text.startsWith('/')) {
    throw new ApiError('InvalidRequest', 'prefix must start with /')
  }
  const segments = text.split('/').slice(1)
  if (segments.at(-1) === '') segments.pop()
  for (const segment of segments) {
    if (segment === '.' || segment === '..' || segment.includes('..')) {
      throw new ApiError('InvalidRequest', 'prefix must not contain ..')
    }
    if (!SEGMENT.test(segment)) {
      throw new ApiError(
        'InvalidRequest',
        `prefix segment ${JSON.stringify(segment)} is empty or has characters outside a plain path`,
      )
    }
  }
  if (segments.length > 0 && RESERVED_SEGMENTS.has(segments[0]!.toLowerCase())) {
    throw new ApiError('InvalidRequest', 'prefixes under /auth/ and /private/ are reserved and cannot be routed')
  }
  // Lower case: prefixes match in any case, so `/A/` and `/a/` are one route.
  return segments.length === 0 ? '/' : `/${segments.join('/').toLowerCase()}/`
}

function checkUpstream(upstream: string, modules: Set<string> | undefined): string {
  if (typeof upstream !== 'string' || upstream === '') throw new ApiError('InvalidRequest', 'upstream is required')
  if (MODULE_NAME.test(upstream)) {
    if (modules && !modules.has(upstream)) {
      throw new ApiError('InvalidRequest', `upstream ${upstream} is not a module named in the Modules setting`)
    }
    return upstream
  }
  let url: URL
  try {
    url = new URL(upstream)
  } catch {
    throw new ApiError('InvalidRequest', 'upstream must be a module name or an absolute http(s) URL')
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.username ||
    url.password ||
    url.search ||
    url.hash
  ) {
    throw new ApiError('InvalidRequest', 'upstream URL must be http(s) without credentials, query or fragment')
  }
  return url.href.replace(/\/+$/, '')
}

function checkFlags(flags: number): number {
  if (!Number.isInteger(flags) || flags < 0 || (flags & ~ROUTE_FLAGS) !== 0) {
    throw new ApiError('InvalidRequest', `flags must be a combination of RouteFlags (${ROUTE_FLAGS} at most)`)
  }
  return flags
}

/** A compiled route table: longest prefix first, matched on whole path segments. */
export interface RouteTable {
  /** The route for a decoded request path, or undefined (also for /auth/ and /private/ paths). */
  match(path: string): Route | undefined
  readonly routes: readonly Route[]
}

/**
 * Compiles routes into a table; matching is a scan of a few string comparisons. Prefixes match in
 * any letter case: modules on case-insensitive routers (Express by default, ASP.NET) read
 * `/LOCKED/x` as `/locked/x`, so it must meet the rules of `/locked/` (docs/security.md).
 */
export function compileRouteTable(routes: readonly Route[]): RouteTable {
  const entries = routes
    .map((route) => ({ stem: route.prefix.slice(0, -1).toLowerCase(), route }))
    .sort((a, b) => b.stem.length - a.stem.length)
  return {
    routes,
    match(path) {
      if (isReservedPath(path)) return undefined
      const lower = path.toLowerCase()
      for (const { stem, route } of entries) {
        if (lower.startsWith(stem) && (lower.length === stem.length || lower.charCodeAt(stem.length) === 47))
          return route
      }
      return undefined
    },
  }
}

/**
 * The route map (table `routes`). Writes go to the database; `table` is an in-memory snapshot that
 * `refresh` reloads (the proxy calls it on an interval so rows written by another process, such as
 * the CLI, apply without a restart) and that this process's own writes refresh at once.
 */
export function createRoutes(
  db: Kysely<GatewayDatabase>,
  nextTick: TimetickGenerator,
  now: () => number = Date.now,
  options: RoutesOptions = {},
) {
  const modules = options.modules ? new Set(options.modules) : undefined
  let table = compileRouteTable([])

  async function list(): Promise<Route[]> {
    return db.selectFrom('routes').select(['id', 'prefix', 'upstream', 'flags']).orderBy('prefix').execute()
  }

  // Reloads overlap (the interval's, and each local write's): one that began earlier may end later
  // with older rows, so a reload's table replaces only the table of a reload that began before it.
  let reloadsBegun = 0
  let tableReload = 0

  async function refresh(): Promise<RouteTable> {
    const reload = ++reloadsBegun
    const rows = await list()
    if (reload > tableReload) {
      tableReload = reload
      table = compileRouteTable(rows)
    }
    return table
  }

  async function exists(prefix: string): Promise<boolean> {
    const row = await db.selectFrom('routes').select('id').where('prefix', '=', prefix).executeTakeFirst()
    return row !== undefined
  }

  return {
    list,
    refresh,

    /** The current snapshot (never a database query). */
    get table(): RouteTable {
      return table
    },

    /** Adds a route; InvalidRequest for a bad prefix, upstream or flags, Conflict when the prefix exists. */
    async add(input: NewRoute): Promise<Route> {
      const prefix = canonicalPrefix(input.prefix)
      const upstream = checkUpstream(input.upstream, modules)
      const flags = checkFlags(input.flags ?? 0)
      if (await exists(prefix)) throw new ApiError('Conflict', `a route for ${prefix} already exists`)
      const route: Route = { id: nextTick(), prefix, upstream, flags }
      try {
        await db
          .insertInto('routes')
          .values({ ...route, created: now(), timetick_update: nextTick() })
          .execute()
      } catch (error) {
        // Two writers racing on one prefix: the unique index refuses the second.
        if (await exists(prefix)) throw new ApiError('Conflict', `a route for ${prefix} already exists`)
        throw error
      }
      await refresh()
      return route
    },

    /**
     * Changes the upstream and flags of the route with this prefix; InvalidRequest for a bad
     * upstream or flags, NotFound when there is no such route. The table follows at once.
     */
    async update(prefix: string, change: { upstream: string; flags: number }): Promise<Route> {
      const canonical = canonicalPrefix(prefix)
      const upstream = checkUpstream(change.upstream, modules)
      const flags = checkFlags(change.flags)
      const result = await db
        .updateTable('routes')
        .set({ upstream, flags, timetick_update: nextTick() })
        .where('prefix', '=', canonical)
        .returning('id')
        .executeTakeFirst()
      if (!result) throw new ApiError('NotFound', `no route for ${canonical}`)
      await refresh()
      return { id: result.id, prefix: canonical, upstream, flags }
    },

    /** Removes the route with this prefix (any spelling of it); false when there was none. */
    async remove(prefix: string): Promise<boolean> {
      let canonical: string
      try {
        canonical = canonicalPrefix(prefix)
      } catch {
        return false
      }
      const result = await db.deleteFrom('routes').where('prefix', '=', canonical).executeTakeFirst()
      await refresh()
      return result.numDeletedRows > 0n
    },
  }
}

export type Routes = ReturnType<typeof createRoutes>
