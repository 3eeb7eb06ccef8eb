/**
 * nginx for the gateway proxy benchmark (bench/proxy.ts): a configuration per target written into
 * the benchmark's temp directory and nginx run as a foreground child (`daemon off`, one worker by default,
 * `-p <dir> -c <conf> -e <log>`), so no system configuration or log is touched.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { childrenOf, type Pinned, spawnPinned } from './proxy-processes.ts'

export type NginxKind =
  /** proxy_pass to the upstream over keep-alive connections. */
  | { kind: 'proxy'; upstream: number }
  /** auth_request to the auth service, then proxy_pass; both upstreams kept alive. */
  | { kind: 'auth'; upstream: number; auth: number }
  /** Files from `root` with `gzip_static on` (a pre-compressed .gz beside each file). */
  | { kind: 'static'; root: string }

export interface Nginx {
  port: number
  /** Master and worker, for CPU accounting. */
  pids(): number[]
  /** The error log, for when a request fails. */
  errors(): string
  stop(): Promise<void>
}

// Keep-alive both ways: wrk's connections and the upstream pool serve every request of a run.
const PROXY_TO = (name: string) => `proxy_pass http://${name};
      proxy_http_version 1.1;
      proxy_set_header Connection "";`

function upstreamBlock(name: string, port: number) {
  return `upstream ${name} {
    server 127.0.0.1:${port};
    keepalive 64;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
  }`
}

function locations(target: NginxKind): string {
  if (target.kind === 'proxy') {
    return `location / {
      ${PROXY_TO('app')}
    }`
  }
  if (target.kind === 'auth') {
    // The pattern of Authelia and oauth2-proxy deployments: every request asks the auth service first.
    return `location / {
      auth_request /_auth;
      auth_request_set $auth_user $upstream_http_x_auth_user;
      proxy_set_header X-Auth-User $auth_user;
      ${PROXY_TO('app')}
    }
    location = /_auth {
      internal;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      ${PROXY_TO('auth')}
    }`
  }
  return `location / {
      root ${target.root};
      gzip_static on;
      sendfile on;
      tcp_nopush on;
    }`
}

/** The whole nginx.conf of one target listening on `port`, with its state under `dir`. */
export function nginxConfig(target: NginxKind, port: number, dir: string, workers = 1): string {
  const upstreams = [
    target.kind !== 'static' ? upstreamBlock('app', target.upstream) : '',
    target.kind === 'auth' ? upstreamBlock('auth', target.auth) : '',
  ].filter(Boolean)
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((name) => `${name}_temp_path ${join(dir, 'temp', name)};`)
    .join('\n  ')
  return `daemon off;
master_process on;
worker_processes ${workers};
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events {
  worker_connections 4096;
}
http {
  access_log off;
  ${temp}
  default_type application/octet-stream;
  keepalive_requests 1000000;
  keepalive_timeout 120s;
  ${upstreams.join('\n  ')}
  server {
    listen 127.0.0.1:${port};
    ${locations(target)}
  }
}
`
}

/** A free loopback port (bound and released; nginx takes it a moment later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        address && typeof address !== 'string' ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })
}

async function waitForWorkers(master: Pinned, count: number, ms: number): Promise<number[]> {
  const deadline = Date.now() + ms
  for (;;) {
    if (master.child.exitCode !== null) throw new Error(`nginx exited: ${master.stderr()}`)
    const workers = childrenOf(master.pid)
    if (workers.length >= count) return workers
    if (Date.now() > deadline) throw new Error(`nginx started no worker: ${master.stderr()}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Starts nginx for `target` in `dir` (created; readable by the unprivileged worker) pinned to `cpu`. */
export async function startNginx(target: NginxKind, dir: string, cpu: string, workers = 1): Promise<Nginx> {
  mkdirSync(join(dir, 'temp'), { recursive: true })
  chmodSync(dir, 0o755)
  const port = await freePort()
  const conf = join(dir, 'nginx.conf')
  writeFileSync(conf, nginxConfig(target, port, dir, workers))
  const log = join(dir, 'error.log')
  const master = spawnPinned(cpu, 'nginx', ['-p', dir, '-c', conf, '-e', log])
  const started = await waitForWorkers(master, workers, 10_000)
  return {
    port,
    pids: () => [master.pid, ...started],
    errors: () => {
      try {
        return readFileSync(log, 'utf8').slice(-4000)
      } catch {
        return ''
      }
    },
    stop: () => master.stop(),
  }
}
