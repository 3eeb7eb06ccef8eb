/**
 * The targets of the gateway proxy benchmark (bench/proxy.ts): what wrk requests from which
 * server, which processes' CPU is the cost of the answer, and a check that the server answers as
 * it should before it is measured (the right body, 401 without the session, the gzipped page).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import { startNginx } from './proxy-nginx.ts'
import { UPSTREAM_BODY } from './proxy-servers.ts'

export const TARGETS = [
  'nginx',
  'nginx-auth',
  'gateway',
  'gateway-auth',
  'node-proxy',
  'node-proxy-signed',
  'static-nginx',
  'static-gateway',
  'static-node',
] as const
export type TargetName = (typeof TARGETS)[number]
/** The targets served by the gateway, which `--baseline` measures on the baseline's gateway too. */
export const GATEWAY_TARGETS: readonly TargetName[] = ['gateway', 'gateway-auth', 'static-gateway']

/** The route prefix of the upstream, on nginx and the gateway alike. */
export const PROXY_PREFIX = '/bench/'
const PROXY_PATH = `${PROXY_PREFIX}item`
/** Where the gateway serves the static page (Static.Apps mount). */
export const STATIC_MOUNT = '/site/'
const STATIC_BYTES = 20 * 1024

export interface Target {
  /** A TargetName, with `@baseline` when measured on the baseline's gateway. */
  name: string
  url: string
  headers: Record<string, string>
  /** The processes whose CPU is the cost of serving: nginx master and worker, or the gateway. */
  server: number[]
  /** The auth service of nginx auth_request. */
  auth: number[]
  /** Throws when the target does not answer as it should. */
  check(): Promise<void>
}

export interface TargetContext {
  /** Temp directory; nginx gets a subdirectory per target. */
  dir: string
  /** taskset CPU list of the servers. */
  cpu: string
  upstreamPort: number
  /** The gateway's port and its processes (one, or a primary and its workers). */
  gateway: { port: number; pids: number[] }
  cookieName: string
  /** The session token of the gateway's benchmark user, also the one the auth service accepts. */
  token: string
  /**
   * Starts a helper of bench/proxy-servers.ts on the servers' CPU, stopped with the benchmark: the
   * auth service of nginx auth_request, or the bare Node proxy.
   */
  startHelper(role: 'auth' | 'proxy' | 'proxy-signed' | 'static'): Promise<{ pid: number; port: number }>
  /** Registers a server's stop for the end of the benchmark. */
  track(stop: () => Promise<void>): void
  /** The page and the directory with it and its .gz for nginx. */
  page: string
  nginxRoot: string
}

/** A 20 KB HTML page of varied text, so gzip compresses it about as much as a real page. */
function staticPage(): string {
  const words = 'atrium gateway module session cookie proxy upstream route static page chat message member'.split(' ')
  let seed = 42
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
    return seed
  }
  const parts = [
    '<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>Atrium</title></head>\n<body>\n',
  ]
  let size = parts[0]!.length
  for (let paragraph = 0; size < STATIC_BYTES - 200; paragraph++) {
    const sentence = Array.from({ length: 12 + (next() % 20) }, () => words[next() % words.length]).join(' ')
    const line = `<p id="p${paragraph}" class="c${next() % 7}">${sentence} ${next().toString(36)}.</p>\n`
    parts.push(line)
    size += line.length
  }
  const page = `${parts.join('')}</body>\n</html>\n`
  return page.padEnd(STATIC_BYTES - 1, ' ').concat('\n')
}

/**
 * Writes the page for both servers: for nginx with a .gz beside it (what gzip_static serves), for
 * the gateway alone (it compresses its copy itself at start).
 */
export function writeStaticPage(dir: string) {
  const page = staticPage()
  const nginxRoot = join(dir, 'static-nginx-root')
  const gatewayRoot = join(dir, 'static-gateway-root')
  mkdirSync(nginxRoot)
  mkdirSync(gatewayRoot)
  writeFileSync(join(nginxRoot, 'index.html'), page)
  writeFileSync(join(nginxRoot, 'index.html.gz'), gzipSync(page, { level: 9 }))
  writeFileSync(join(gatewayRoot, 'index.html'), page)
  return { page, nginxRoot, gatewayRoot }
}

/** A response as received, body not decoded. */
interface Raw {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
}

function get(url: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

function describe(raw: Raw): string {
  return `${raw.status} ${raw.body.subarray(0, 200).toString('utf8')}`
}

/** The upstream's answer comes through; with `authenticated`, a request without the session is refused. */
async function expectUpstream(url: string, headers: Record<string, string>, authenticated = true) {
  const answer = await get(url, headers)
  if (answer.status !== 200 || answer.body.toString('utf8') !== UPSTREAM_BODY) {
    throw new Error(`GET ${url} answered ${describe(answer)}`)
  }
  if (!authenticated) return
  const refused = await get(url, {})
  if (refused.status !== 401) throw new Error(`GET ${url} without the session answered ${describe(refused)}, not 401`)
}

async function expectOk(url: string, headers: Record<string, string>) {
  const answer = await get(url, headers)
  if (answer.status !== 200) throw new Error(`GET ${url} answered ${describe(answer)}`)
}

async function expectGzipPage(url: string, headers: Record<string, string>, page: string) {
  const answer = await get(url, headers)
  const ok =
    answer.status === 200 &&
    answer.headers['content-encoding'] === 'gzip' &&
    gunzipSync(answer.body).toString('utf8') === page
  if (!ok) {
    throw new Error(`GET ${url} answered ${answer.status} ${JSON.stringify(answer.headers)}, not the gzipped page`)
  }
}

/** Starts what the target needs besides the gateway (nginx, the auth service) and describes it. */
export async function createTarget(name: TargetName, context: TargetContext): Promise<Target> {
  const cookie = { Cookie: `${context.cookieName}=${context.token}` }
  const gzip = { ...cookie, 'Accept-Encoding': 'gzip' }
  const gateway = `http://127.0.0.1:${context.gateway.port}`
  const onGateway = (path: string, headers: Record<string, string>) => ({
    name,
    url: `${gateway}${path}`,
    headers,
    server: context.gateway.pids,
    auth: [],
  })

  if (name === 'gateway') {
    const target = onGateway(PROXY_PATH, cookie)
    return { ...target, check: () => expectUpstream(target.url, cookie) }
  }
  if (name === 'gateway-auth') {
    // The gateway answering a session-authenticated request itself: its cost without the proxy.
    const target = onGateway('/auth/v1/health', cookie)
    return { ...target, check: () => expectOk(target.url, cookie) }
  }
  if (name === 'static-gateway') {
    const target = onGateway(`${STATIC_MOUNT}index.html`, gzip)
    return { ...target, check: () => expectGzipPage(target.url, gzip, context.page) }
  }

  if (name === 'static-node') {
    // The static floor: bare node:http answering the page gzipped in memory, nothing else.
    const server = await context.startHelper('static')
    const url = `http://127.0.0.1:${server.port}${STATIC_MOUNT}index.html`
    return {
      name,
      url,
      headers: gzip,
      server: [server.pid],
      auth: [],
      check: () => expectGzipPage(url, gzip, context.page),
    }
  }

  if (name === 'node-proxy' || name === 'node-proxy-signed') {
    // The runtime's floor: authenticate and forward in bare node:http, nothing else of the gateway;
    // signed, also the request id, identity headers and signed hop the gateway must send.
    const proxy = await context.startHelper(name === 'node-proxy' ? 'proxy' : 'proxy-signed')
    const url = `http://127.0.0.1:${proxy.port}${PROXY_PATH}`
    return { name, url, headers: cookie, server: [proxy.pid], auth: [], check: () => expectUpstream(url, cookie) }
  }

  const auth = name === 'nginx-auth' ? await context.startHelper('auth') : undefined
  const nginx = await startNginx(
    name === 'static-nginx'
      ? { kind: 'static', root: context.nginxRoot }
      : auth
        ? { kind: 'auth', upstream: context.upstreamPort, auth: auth.port }
        : { kind: 'proxy', upstream: context.upstreamPort },
    join(context.dir, name),
    context.cpu,
  )
  context.track(() => nginx.stop())
  const base = { name, server: nginx.pids(), auth: auth ? [auth.pid] : [] }
  if (name === 'static-nginx') {
    const url = `http://127.0.0.1:${nginx.port}/index.html`
    return { ...base, url, headers: gzip, check: () => expectGzipPage(url, gzip, context.page) }
  }
  const url = `http://127.0.0.1:${nginx.port}${PROXY_PATH}`
  // Plain proxy_pass checks no session.
  return { ...base, url, headers: cookie, check: () => expectUpstream(url, cookie, auth !== undefined) }
}
