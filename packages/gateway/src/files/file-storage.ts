import type { Readable } from 'node:stream'

/**
 * A chunk written to storage but not yet part of its upload: the caller checks it (the CRC32 of
 * the bytes it fed) and then commits or discards it. Until `commit` resolves, the upload's bytes
 * are those before the chunk; a discarded chunk leaves no trace.
 */
export interface StagedChunk {
  /** Bytes the chunk holds. */
  readonly bytes: number
  /** Makes the chunk part of the upload; the caller then records the new offset. */
  commit(): Promise<void>
  /** Drops the chunk; the upload stays as it was before it. */
  discard(): Promise<void>
}

/**
 * Where upload bytes live: local disk or an S3-compatible object store. Bytes
 * are streamed, never held whole in memory. The gateway database, not the storage, knows each
 * upload's offset and state; a backend may keep bytes past that offset after a crash, and the next
 * `stage` at the recorded offset replaces them. An S3 backend can stage chunks in a local file
 * until a multipart part (at least 5 MiB, except the last) is complete, and upload it on commit.
 */
export interface FileStorage {
  /** Prepares an empty upload under `key` (a string of letters, digits, `-` and `_`). */
  create(key: string): Promise<void>
  /**
   * Writes `body` as the chunk that starts at `offset`. If `body` throws (too long, aborted), what
   * was written is dropped and the error rethrown.
   */
  stage(key: string, offset: number, body: AsyncIterable<Uint8Array>): Promise<StagedChunk>
  /** Seals an upload whose `length` bytes are all committed, so it can be read as a file. */
  finish(key: string, length: number): Promise<void>
  /**
   * Opens bytes `start` to `end` (inclusive) of a finished upload, or all of them, for a download.
   * Rejects with FileMissingError when the storage has no bytes under `key`, before any is sent.
   */
  open(key: string, range?: { start: number; end: number }): Promise<Readable>
  /** Removes an upload's bytes, finished or not; a missing one is not an error. */
  remove(key: string): Promise<void>
}

/** The storage holds no bytes under a key that the database says it should. */
export class FileMissingError extends Error {
  override name = 'FileMissingError'
}
