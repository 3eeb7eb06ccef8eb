/**
 * The servers of the upload benchmark (bench/upload.ts), each in its own process so the benchmark
 * can pin it and read its CPU time and RSS from /proc:
 *   node bench/upload-servers.ts gateway < spec.json   the gateway, uploads at /auth/v1/uploads
 *   node bench/upload-servers.ts tus < spec.json       @tus/server on @tus/file-store at /files
 * Each listens on an ephemeral loopback port and prints one JSON line (UploadServerReady); the
 * gateway's carries the session token of a user it created. SIGTERM closes the server cleanly.
 */
import { mkdirSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { text } from 'node:stream/consumers'
import { FileStore } from '@tus/file-store'
import { Server } from '@tus/server'
import { benchSessionToken, buildBenchGateway, listenOnLoopback } from './bench-gateway.ts'
import { stopWithParent } from './child-process.ts'

export interface UploadServerSpec {
  /** Directory for the database and the uploaded bytes. */
  dir: string
}

export interface UploadServerReady {
  port: number
  /** Path of the tus creation endpoint. */
  path: string
  /** The gateway's session token of the benchmark's user (sent as a bearer token); empty for tus. */
  token: string
}

async function gateway(spec: UploadServerSpec): Promise<UploadServerReady> {
  const { app } = await buildBenchGateway({
    GatewayDB: `sqlite:${join(spec.dir, 'gateway.db')}`,
    ServiceSecret: 'upload-bench-service-secret'.padEnd(40, '-'),
    LocalFileStoragePath: join(spec.dir, 'files'),
    // No quota: finished uploads count against it, and the benchmark writes many gigabytes.
    Files: { MaxFileSize: 2 * 1024 ** 3, QuotaBytes: 0 },
  })
  const token = await benchSessionToken(app, 'Bench User', 'upload-bench')
  const port = await listenOnLoopback(app)
  stopWithParent(() => app.close())
  return { port, path: '/auth/v1/uploads', token }
}

async function tus(spec: UploadServerSpec): Promise<UploadServerReady> {
  const directory = join(spec.dir, 'files')
  mkdirSync(directory, { recursive: true })
  const server = new Server({ path: '/files', datastore: new FileStore({ directory }) })
  const http = createServer((req, res) => server.handle(req, res))
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  stopWithParent(() => new Promise((resolve) => http.close(resolve)))
  return { port: (http.address() as AddressInfo).port, path: '/files', token: '' }
}

async function main() {
  const spec = JSON.parse(await text(process.stdin)) as UploadServerSpec
  const role = process.argv[2]
  if (role !== 'gateway' && role !== 'tus') throw new Error(`unknown server ${role}`)
  const ready = role === 'gateway' ? await gateway(spec) : await tus(spec)
  process.stdout.write(`${JSON.stringify(ready)}\n`)
}

await main()
