import { randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createOutboundClient, type OutboundClient } from '../outbound/outbound-request.ts'
import { FileMissingError, type FileStorage, type StagedChunk } from './file-storage.ts'
import { createS3Client, S3Error, type S3Settings } from './s3-client.ts'

const KEY = /^[A-Za-z0-9_-]{1,128}$/

/**
 * What S3 holds of an upload at one offset, stored as the object `<key>.info.<offset>`: the
 * multipart upload, the ETags of its full parts (every part but the last has `partSize` bytes),
 * the object holding the tail past the last full part (shorter than a part; '' when empty), and
 * the objects of the state before, which may go once the upload has moved past this offset.
 */
interface UploadState {
  uploadId: string
  partSize: number
  parts: string[]
  tail: string
  before: string[]
}

type Body = { stream: Readable | Buffer; length: number }

function infoKey(key: string, offset: number): string {
  return `${key}.info.${offset}`
}

/** Bytes `start` to `end` (exclusive) of a local file. */
function fileRange(path: string, start: number, end: number): Readable {
  return createReadStream(path, { start, end: end - 1 })
}

/**
 * File storage on an S3-compatible object store (issue 15), for gateways that share uploads. A
 * chunk is staged in a local temporary file; committing it joins it to the stored tail and uploads
 * every full part of `PartSize` bytes to the upload's multipart upload, stores the new tail as an
 * object, and records the new state under the new offset. States are kept per offset, so the
 * state at the offset the gateway database records is always there to continue from, on any
 * gateway, whatever a crash left past it. `finish` completes the multipart upload; only then is
 * the object `<key>` visible.
 */
export function createS3FileStorage(
  settings: S3Settings,
  outbound: OutboundClient = createOutboundClient({
    allowPrivateAddresses: settings.AllowPrivateAddresses,
    timeoutMs: settings.TimeoutMs,
    allowSetting: 'Files.S3.AllowPrivateAddresses',
  }),
): FileStorage {
  const s3 = createS3Client(settings, outbound)
  let staging: Promise<string> | undefined

  function checked(key: string): string {
    if (!KEY.test(key)) throw new Error(`invalid storage key ${JSON.stringify(key)}`)
    return key
  }

  async function readState(key: string, offset: number): Promise<UploadState> {
    let text: string
    try {
      const response = await s3.send({ method: 'GET', key: infoKey(key, offset) })
      const chunks: Buffer[] = []
      for await (const chunk of response) chunks.push(chunk as Buffer)
      text = Buffer.concat(chunks).toString('utf8')
    } catch (error) {
      if (error instanceof S3Error && error.status === 404) {
        throw new Error(`S3 holds no state of upload ${key} at offset ${offset}`, { cause: error })
      }
      throw error
    }
    return JSON.parse(text) as UploadState
  }

  async function writeState(key: string, offset: number, state: UploadState): Promise<void> {
    const json = Buffer.from(JSON.stringify(state))
    await s3.putObject(infoKey(key, offset), { stream: json, length: json.length })
  }

  /** The stored tail followed by bytes of the staged file, as one body. */
  async function tailThen(state: UploadState, tailLength: number, file: Readable | undefined): Promise<Readable> {
    const tail = tailLength > 0 ? await s3.send({ method: 'GET', key: state.tail }) : undefined
    return Readable.from(
      (async function* joined() {
        if (tail) yield* tail
        if (file) yield* file
      })(),
    )
  }

  async function deleteAll(keys: string[]): Promise<void> {
    await Promise.all(keys.filter((key) => key !== '').map((key) => s3.deleteObject(key)))
  }

  /** Makes the `bytes` staged in `path` part of the upload that S3 holds at `offset` (in `state`). */
  async function append(key: string, offset: number, state: UploadState, path: string, bytes: number) {
    const size = state.partSize
    const tailLength = offset - state.parts.length * size
    const total = tailLength + bytes
    const full = Math.floor(total / size)
    const parts = [...state.parts]
    for (let i = 0; i < full; i++) {
      // Part i holds bytes [i * size, (i + 1) * size) of the stored tail followed by the chunk.
      const from = i * size - tailLength
      const stream =
        i === 0 && tailLength > 0
          ? await tailThen(state, tailLength, fileRange(path, 0, size - tailLength))
          : fileRange(path, from, from + size)
      parts.push(await s3.uploadPart(key, state.uploadId, parts.length + 1, { stream, length: size }))
    }
    const rest = total - full * size
    const to = offset + bytes
    let tail = ''
    if (rest > 0) {
      tail = `${key}.part.${to}.${randomBytes(4).toString('hex')}`
      const stream =
        full === 0 ? await tailThen(state, tailLength, fileRange(path, 0, bytes)) : fileRange(path, bytes - rest, bytes)
      await s3.putObject(tail, { stream, length: rest })
    }
    await writeState(key, to, {
      uploadId: state.uploadId,
      partSize: size,
      parts,
      tail,
      before: [infoKey(key, offset), state.tail],
    })
    // The database is at `offset` or past it now, so the state before `offset` is never read again.
    await deleteAll(state.before)
  }

  async function stagingFile(key: string): Promise<string> {
    staging ??= (
      settings.StagingPath
        ? mkdir(settings.StagingPath, { recursive: true }).then(() => settings.StagingPath)
        : mkdtemp(join(tmpdir(), 'atrium-s3-'))
    ).catch((error) => {
      staging = undefined // tried again with the next chunk
      throw error
    })
    return join(await staging, `${key}-${randomBytes(8).toString('hex')}`)
  }

  return {
    async create(key) {
      const uploadId = await s3.createMultipartUpload(checked(key))
      try {
        await writeState(key, 0, { uploadId, partSize: settings.PartSize, parts: [], tail: '', before: [] })
      } catch (error) {
        // Without its state the multipart upload could never be found again to abort it.
        await s3.abortMultipartUpload(key, uploadId).catch(() => {})
        throw error
      }
    },

    async stage(key, offset, body): Promise<StagedChunk> {
      const state = await readState(checked(key), offset)
      const path = await stagingFile(key)
      let bytes = 0
      try {
        await pipeline(
          body,
          async function* count(source: AsyncIterable<Uint8Array>) {
            for await (const chunk of source) {
              bytes += chunk.length
              yield chunk
            }
          },
          createWriteStream(path),
        )
      } catch (error) {
        await rm(path, { force: true })
        throw error
      }
      return {
        bytes,
        async commit() {
          try {
            await append(key, offset, state, path, bytes)
          } finally {
            await rm(path, { force: true })
          }
        },
        async discard() {
          await rm(path, { force: true })
        },
      }
    },

    async finish(key, length) {
      const state = await readState(checked(key), length)
      const tailLength = length - state.parts.length * state.partSize
      const tail: Body = {
        stream: tailLength > 0 ? await tailThen(state, tailLength, undefined) : Buffer.alloc(0),
        length: tailLength,
      }
      if (state.parts.length === 0) {
        // Shorter than one part: one plain object, and the multipart upload is not needed.
        await s3.putObject(key, tail)
        await s3.abortMultipartUpload(key, state.uploadId)
      } else {
        const parts = [...state.parts]
        if (tailLength > 0) parts.push(await s3.uploadPart(key, state.uploadId, parts.length + 1, tail))
        await s3.completeMultipartUpload(key, state.uploadId, parts)
      }
      await deleteAll(await s3.listKeys(`${key}.`))
    },

    async open(key, range): Promise<Readable> {
      try {
        return await s3.send({
          method: 'GET',
          key: checked(key),
          headers: range ? { range: `bytes=${range.start}-${range.end}` } : {},
        })
      } catch (error) {
        if (error instanceof S3Error && error.status === 404) throw new FileMissingError(`no bytes under ${key}`)
        throw error
      }
    },

    async remove(key) {
      const helpers = await s3.listKeys(`${checked(key)}.`)
      const info = helpers.find((name) => name.startsWith(`${key}.info.`))
      if (info) {
        const offset = Number(info.slice(`${key}.info.`.length))
        await s3.abortMultipartUpload(key, (await readState(key, offset)).uploadId)
      }
      await deleteAll(helpers)
      await s3.deleteObject(key)
    },
  }
}
