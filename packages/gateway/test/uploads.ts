import { access, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buffer } from 'node:stream/consumers'
import type { TestContext } from 'node:test'
import { crc32 } from 'node:zlib'
import type { DatabaseDialect } from '@atrium/platform'
import { forEachDialect } from '@atrium/platform/testing'
import { FileMissingError } from '../src/files/file-storage.ts'
import { createLocalFileStorage } from '../src/files/local-storage.ts'
import { createS3FileStorage } from '../src/files/s3-storage.ts'
import { startS3Server } from './s3-server.ts'
import { type StartOptions, signedInUser, startGateway } from './support.ts'

/** A fresh directory for upload bytes, removed after the test. */
export async function storageDirectory(t: TestContext): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-files-'))
  t.after(() => rm(directory, { recursive: true, force: true }))
  return directory
}

/** Where a test gateway keeps upload bytes: its own directory, or a bucket on its own S3 server. */
export type StorageBackend = 'local' | 's3'

/** Declares a test for each storage backend, each on SQLite (and PostgreSQL when configured). */
export function forEachStorage(
  name: string,
  fn: (t: TestContext, dialect: DatabaseDialect, backend: StorageBackend) => Promise<void> | void,
): void {
  for (const backend of ['local', 's3'] as const) {
    forEachDialect(`${name} (${backend})`, (t, dialect) => fn(t, dialect, backend))
  }
}

export interface UploadGatewayOptions extends StartOptions {
  /** The storage backend; local disk when omitted. */
  backend?: StorageBackend
}

/**
 * A gateway storing uploads in a directory of the test's own or, with `backend: 's3'`, on an S3
 * server of its own, with a signed-in user and backend-neutral readers of what the storage holds.
 */
export async function startUploadGateway(t: TestContext, dialect: DatabaseDialect, options: UploadGatewayOptions = {}) {
  const directory = await storageDirectory(t)
  const s3 = options.backend === 's3' ? await startS3Server(t) : undefined
  const files = (options.settings?.Files ?? {}) as Record<string, unknown>
  const backendSettings = s3
    ? {
        FileStorage: 's3',
        Files: {
          ...files,
          S3: { ...s3.settings, StagingPath: directory, ...(files.S3 as Record<string, unknown> | undefined) },
        },
      }
    : { LocalFileStoragePath: directory }
  const gateway = await startGateway(t, dialect, {
    ...options,
    settings: { ...options.settings, ...backendSettings },
  })
  const user = await signedInUser(gateway)
  const storage = s3 ? createS3FileStorage(gateway.config.Files.S3) : createLocalFileStorage(directory)
  const keyOf = (url: string) => url.split('/').at(-1) ?? ''
  return {
    ...gateway,
    directory,
    s3,
    user,
    storage,
    uploads: `${gateway.url}/auth/v1/uploads`,
    /** The committed bytes of the upload at `url`, finished or not. */
    async storedBytes(url: string): Promise<Buffer> {
      if (!s3) return storedBytes(directory, url)
      try {
        return await buffer(await storage.open(keyOf(url)))
      } catch (error) {
        if (!(error instanceof FileMissingError)) throw error
        return s3.committedBytes(keyOf(url))
      }
    },
    /** Bytes the storage holds of the upload, with those of a chunk still arriving. */
    async arrivingBytes(url: string): Promise<number> {
      if (!s3) return (await stat(join(directory, keyOf(url)))).size
      const staged = (await readdir(directory)).filter((name) => name.startsWith(`${keyOf(url)}-`))
      const sizes = await Promise.all(staged.map(async (name) => (await stat(join(directory, name))).size))
      return sizes.reduce((sum, size) => sum + size, (await s3.committedBytes(keyOf(url))).length)
    },
    /** Whether the storage holds anything at all of the upload. */
    async holds(url: string): Promise<boolean> {
      if (s3) return (await s3.keys()).some((key) => key === keyOf(url) || key.startsWith(`${keyOf(url)}.`))
      return access(join(directory, keyOf(url))).then(
        () => true,
        () => false,
      )
    },
  }
}

/** The Upload-Checksum value of a chunk: crc32 and the base64 of its 4-byte big-endian CRC. */
export function checksumOf(bytes: Uint8Array): string {
  const value = Buffer.alloc(4)
  value.writeUInt32BE(crc32(bytes))
  return `crc32 ${value.toString('base64')}`
}

/** Headers of a tus request by the user: their cookie and CSRF token, Tus-Resumable, and `extra`. */
export function tusHeaders(
  user: { headers: Record<string, string> },
  extra: Record<string, string> = {},
): Record<string, string> {
  const { 'Content-Type': _json, ...credentials } = user.headers
  return { ...credentials, 'Tus-Resumable': '1.0.0', ...extra }
}

/** Creates an upload of `length` bytes and returns its absolute URL. */
export async function createUpload(base: string, headers: Record<string, string>, length: number): Promise<string> {
  const response = await fetch(base, { method: 'POST', headers: { ...headers, 'Upload-Length': String(length) } })
  if (response.status !== 201) throw new Error(`creation answered ${response.status}: ${await response.text()}`)
  return new URL(response.headers.get('location') ?? '', base).href
}

/** Sends one chunk at `offset`, with its correct checksum unless `checksum` is given. */
export function patchChunk(
  url: string,
  headers: Record<string, string>,
  offset: number,
  chunk: Uint8Array,
  checksum: string | null = checksumOf(chunk),
) {
  return fetch(url, {
    method: 'PATCH',
    headers: {
      ...headers,
      'Content-Type': 'application/offset+octet-stream',
      'Upload-Offset': String(offset),
      ...(checksum === null ? {} : { 'Upload-Checksum': checksum }),
    },
    body: new Uint8Array(chunk),
  })
}

/** The upload's offset as HEAD reports it (a number), or the HEAD status when it is not 200. */
export async function offsetOf(url: string, headers: Record<string, string>): Promise<number | string> {
  const response = await fetch(url, { method: 'HEAD', headers })
  return response.status === 200 ? Number(response.headers.get('upload-offset')) : `status ${response.status}`
}

/** The bytes of an upload URL on the local-disk backend (it names files by upload id). */
export function storedBytes(directory: string, url: string): Promise<Buffer> {
  return readFile(join(directory, url.split('/').at(-1) ?? ''))
}

/** `length` bytes of test data that differ at every position of a chunk. */
export function testBytes(length: number, seed = 7): Buffer {
  const bytes = Buffer.alloc(length)
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + seed) & 0xff
  return bytes
}

/** Starts a PATCH declaring `declared` bytes, sends `sent` of them and returns a way to cut the connection. */
export function startPartialPatch(url: string, headers: Record<string, string>, declared: number, sent: Buffer) {
  const req = request(url, {
    method: 'PATCH',
    headers: {
      ...headers,
      'Content-Type': 'application/offset+octet-stream',
      'Content-Length': String(declared),
      'Upload-Offset': '0',
    },
  })
  req.on('error', () => {})
  req.write(sent)
  return () => req.destroy()
}

/**
 * Asserts two byte strings are equal, naming the first difference: assert.deepEqual would print
 * a diff of megabytes.
 */
export function assertSameBytes(actual: Uint8Array, expected: Uint8Array, message = 'bytes differ'): void {
  if (Buffer.compare(actual, expected) === 0) return
  let at = 0
  while (at < Math.min(actual.length, expected.length) && actual[at] === expected[at]) at++
  throw new Error(`${message}: ${actual.length} bytes, expected ${expected.length}; first difference at ${at}`)
}
