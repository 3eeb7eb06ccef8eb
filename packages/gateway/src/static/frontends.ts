import { createHash } from 'node:crypto'
import type { Dirent } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import type { GatewayConfig } from '../config.ts'
import { contentTypeOf, isCompressible, isHashedName } from './content-types.ts'

const brotliAsync = promisify(brotliCompress)
const gzipAsync = promisify(gzip)

/** Files smaller than this are sent as they are: compression would save less than its headers cost. */
const MIN_COMPRESS_BYTES = 512

/** One representation of a file: its bytes and strong ETag. */
export interface Variant {
  body: Buffer
  etag: string
}

/** A file held in memory with the variants made for it at load. */
export interface StaticFile {
  contentType: string
  cacheControl: string
  identity: Variant
  br?: Variant
  gzip?: Variant
}

/** One mounted frontend: its files by path relative to the mount (`index.html`, `assets/app-1a2b3c4d.js`). */
export interface Frontend {
  mount: string
  directory: string
  files: Map<string, StaticFile>
  /** Bytes held: originals plus kept variants. */
  bytes: number
}

export interface LoadedFrontends {
  frontends: Frontend[]
  /** Mounts whose directory does not exist (yet); logged when the plugin starts. */
  skipped: { mount: string; directory: string }[]
}

const IMMUTABLE = 'public, max-age=31536000, immutable'
const REVALIDATE = 'no-cache'

/** Lists a directory's regular files, recursively, as paths relative to it with `/` separators. */
async function listFiles(root: string, prefix = ''): Promise<string[]> {
  const entries: Dirent[] = await readdir(join(root, prefix), { withFileTypes: true })
  const files: string[] = []
  for (const entry of entries) {
    // Dotfiles (.env, .git) are never part of a frontend; symlinks could lead out of the build.
    if (entry.name.startsWith('.') || entry.isSymbolicLink()) continue
    const path = prefix ? `${prefix}/${entry.name}` : entry.name
    if (entry.isDirectory()) files.push(...(await listFiles(root, path)))
    else if (entry.isFile()) files.push(path)
  }
  return files
}

function etagOf(body: Buffer, suffix: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}${suffix}"`
}

/** Holds one file in memory with its type, caching rule, ETag and the compressed copies worth keeping. */
export async function loadStaticFile(path: string, body: Buffer): Promise<StaticFile> {
  const identity = { body, etag: etagOf(body, '') }
  const file: StaticFile = {
    contentType: contentTypeOf(path),
    cacheControl: isHashedName(path) && !path.endsWith('.html') ? IMMUTABLE : REVALIDATE,
    identity,
  }
  if (body.length < MIN_COMPRESS_BYTES || !isCompressible(path)) return file
  const [br, gz] = await Promise.all([
    brotliAsync(body, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    }),
    gzipAsync(body, { level: 9 }),
  ])
  // Each encoding is its own representation, so it gets its own strong ETag (RFC 9110 §8.8.3).
  if (br.length < body.length) file.br = { body: br, etag: `${identity.etag.slice(0, -1)}-br"` }
  if (gz.length < body.length) file.gzip = { body: gz, etag: `${identity.etag.slice(0, -1)}-gz"` }
  return file
}

function bytesOf(file: StaticFile): number {
  return file.identity.body.length + (file.br?.body.length ?? 0) + (file.gzip?.body.length ?? 0)
}

function overBudget(mount: string, directory: string, bytes: number, maxBytes: number): Error {
  return new Error(
    `Static.Apps ${mount} (${directory}) needs ${bytes} bytes in memory, more than Static.MaxBytes (${maxBytes}) leaves`,
  )
}

async function loadFrontend(mount: string, directory: string, budget: number): Promise<Frontend> {
  const paths = await listFiles(directory)
  const originals = await Promise.all(paths.map((path) => readFile(join(directory, path))))
  const originalBytes = originals.reduce((sum, body) => sum + body.length, 0)
  // Fail before spending minutes compressing a build that could never fit.
  if (originalBytes > budget) throw overBudget(mount, directory, originalBytes, budget)
  // zlib runs in libuv's thread pool, so the files compress in parallel.
  const loaded = await Promise.all(paths.map((path, index) => loadStaticFile(path, originals[index]!)))
  const files = new Map<string, StaticFile>()
  let bytes = 0
  for (const [index, path] of paths.entries()) {
    files.set(path, loaded[index]!)
    bytes += bytesOf(loaded[index]!)
  }
  if (bytes > budget) throw overBudget(mount, directory, bytes, budget)
  return { mount, directory, files, bytes }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    await readdir(path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw new Error(`Static.Apps: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
}

/**
 * Reads every frontend of `Static.Apps` into memory with its brotli and gzip variants, made once
 * here. A mount whose directory does not exist is skipped (so the gateway starts before the web
 * client is built); a total above `Static.MaxBytes` is an error naming the frontend that crossed it.
 */
export async function loadFrontends(settings: GatewayConfig['Static']): Promise<LoadedFrontends> {
  const loaded: LoadedFrontends = { frontends: [], skipped: [] }
  let budget = settings.MaxBytes
  for (const [mount, directory] of Object.entries(settings.Apps)) {
    if (!(await isDirectory(directory))) {
      loaded.skipped.push({ mount, directory })
      continue
    }
    const frontend = await loadFrontend(mount, directory, budget)
    budget -= frontend.bytes
    loaded.frontends.push(frontend)
  }
  return loaded
}
