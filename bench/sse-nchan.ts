/**
 * nginx with the nchan module for bench/sse.ts: one worker, run as a foreground child with its
 * configuration, pid and log in the benchmark's temp directory (`daemon off`, `-p <dir> -c <conf>`),
 * so no system configuration is touched. Subscribers open `GET /sub/<channel>` as EventSource
 * streams; the publisher POSTs the event's data to `/pub/<channel>`.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { childrenOf } from './proxy-processes.ts'

export interface Nchan {
  port: number
  /** The worker, whose CPU time and memory are measured. */
  worker: number
  stop(): Promise<void>
}

/**
 * The whole nginx.conf: subscribers get the newest messages only (no backlog), and a `: heartbeat`
 * comment every `pingSeconds` like the gateway's streams, so both send the same idle traffic.
 */
export function nchanConfig(modulePath: string, port: number, dir: string, pingSeconds: number): string {
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((name) => `${name}_temp_path ${join(dir, `${name}_temp`)};`)
    .join('\n  ')
  return `load_module ${modulePath};
daemon off;
master_process on;
user root;
worker_processes 1;
worker_rlimit_nofile 20000;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events {
  worker_connections 19000;
}
http {
  access_log off;
  ${temp}
  keepalive_requests 1000000;
  keepalive_timeout 300s;
  server {
    listen 127.0.0.1:${port} backlog=4096;
    location ~ ^/sub/(\\w+)$ {
      nchan_subscriber eventsource;
      nchan_channel_id $1;
      nchan_subscriber_first_message newest;
      nchan_eventsource_ping_interval ${pingSeconds};
      nchan_eventsource_ping_comment heartbeat;
    }
    location ~ ^/pub/(\\w+)$ {
      nchan_publisher;
      nchan_channel_id $1;
      nchan_message_buffer_length 10;
      nchan_message_timeout 60s;
    }
  }
}
`
}

/** Starts nginx with nchan on `port` in `dir`; resolves once its worker runs. */
export async function startNchan(modulePath: string, port: number, dir: string, pingSeconds: number): Promise<Nchan> {
  const conf = join(dir, 'nginx.conf')
  const log = join(dir, 'error.log')
  writeFileSync(conf, nchanConfig(modulePath, port, dir, pingSeconds))
  const master: ChildProcess = spawn('nginx', ['-p', dir, '-c', conf, '-e', log], { stdio: 'ignore' })
  const exited = new Promise<void>((resolve) => master.once('exit', () => resolve()))
  const errors = () => {
    try {
      return readFileSync(log, 'utf8').slice(-2000)
    } catch {
      return ''
    }
  }
  const deadline = Date.now() + 10_000
  let workers: number[] = []
  while (workers.length === 0) {
    if (master.exitCode !== null) throw new Error(`nginx exited: ${errors()}`)
    if (Date.now() > deadline) throw new Error(`nginx started no worker: ${errors()}`)
    await sleep(50)
    workers = childrenOf(master.pid!)
  }
  return {
    port,
    worker: workers[0]!,
    async stop() {
      if (master.exitCode === null) master.kill('SIGTERM')
      const timer = setTimeout(() => master.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    },
  }
}
