import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { crc32 } from 'node:zlib'
import type { DatabaseDialect } from '@atrium/platform'
import { type StartOptions, signedInUser, startGateway } from './support.ts'

/** A fresh directory for upload bytes, removed after the test. */
export async function storageDirectory(t: TestContext): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-files-'))
  t.after(() => rm(directory, { recursive: true, force: true }))
  return directory
}

/** A gateway storing uploads in a directory of the test's own, with a signed-in user. */
export async function startUploadGateway(t: TestContext, dialect: DatabaseDialect, options: StartOptions = {}) {
  const directory = await storageDirectory(t)
  const gateway = await startGateway(t, dialect, {
    ...options,
    settings: { LocalFileStoragePath: directory, ...options.settings },
  })
  const user = await signedInUser(gateway)
  return { ...gateway, directory, user, uploads: `${gateway.url}/auth/v1/uploads` }
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
    body: chunk,
  })
}

/** The upload's offset as HEAD reports it (a number), or the HEAD status when it is not 200. */
export async function offsetOf(url: string, headers: Record<string, string>): Promise<number | string> {
  const response = await fetch(url, { method: 'HEAD', headers })
  return response.status === 200 ? Number(response.headers.get('upload-offset')) : `status ${response.status}`
}

/** The bytes stored for an upload URL (the storage names files by upload id). */
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
