import { type FileHandle, mkdir, open, rm, stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { Readable } from 'node:stream'
import { FileMissingError, type FileStorage, type StagedChunk } from './file-storage.ts'

const KEY = /^[A-Za-z0-9_-]{1,128}$/

async function writeAll(handle: FileHandle, chunk: Uint8Array, position: number): Promise<void> {
  let done = 0
  while (done < chunk.length) {
    const { bytesWritten } = await handle.write(chunk, done, chunk.length - done, position + done)
    done += bytesWritten
  }
}

/**
 * File storage on local disk (LocalFileStoragePath): one file per upload, named by its key. A
 * chunk is written in place at its offset and cut off again (truncated back to the offset) when it
 * is discarded, so nothing is copied twice and the file never holds a rejected chunk afterwards.
 */
export function createLocalFileStorage(directory: string): FileStorage {
  const root = resolve(directory)
  // Made on the first upload, so a gateway that never takes one leaves no directory behind.
  let made: Promise<unknown> | undefined

  function pathOf(key: string): string {
    // Keys come from the database, but a path must never leave the directory whatever they hold.
    if (!KEY.test(key)) throw new Error(`invalid storage key ${JSON.stringify(key)}`)
    return join(root, key)
  }

  return {
    async create(key) {
      made ??= mkdir(root, { recursive: true })
      await made
      const handle = await open(pathOf(key), 'wx')
      await handle.close()
    },

    async stage(key, offset, body): Promise<StagedChunk> {
      const handle = await open(pathOf(key), 'r+')
      let bytes = 0
      try {
        const { size } = await handle.stat()
        if (size < offset) throw new Error(`upload ${key} holds ${size} bytes on disk, fewer than its offset ${offset}`)
        // Bytes past the recorded offset belong to a chunk that was never committed (a crash).
        if (size > offset) await handle.truncate(offset)
        for await (const chunk of body) {
          await writeAll(handle, chunk, offset + bytes)
          bytes += chunk.length
        }
      } catch (error) {
        await handle.truncate(offset).catch(() => {})
        await handle.close()
        throw error
      }
      return {
        bytes,
        async commit() {
          await handle.close()
        },
        async discard() {
          try {
            await handle.truncate(offset)
          } finally {
            await handle.close()
          }
        },
      }
    },

    async finish(key, length) {
      const { size } = await stat(pathOf(key))
      if (size !== length) throw new Error(`upload ${key} holds ${size} bytes on disk, not its length ${length}`)
    },

    async open(key, range): Promise<Readable> {
      let handle: FileHandle
      try {
        handle = await open(pathOf(key), 'r')
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new FileMissingError(`no bytes under ${key}`)
        throw error
      }
      return handle.createReadStream(range)
    },

    async remove(key) {
      await rm(pathOf(key), { force: true })
    },
  }
}
