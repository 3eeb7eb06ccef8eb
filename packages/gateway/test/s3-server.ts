import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buffer } from 'node:stream/consumers'
import type { TestContext } from 'node:test'
import S3rver from '@20minutes/s3rver'

/** The credentials the test S3 server knows (its built-in account); it verifies SigV4 signatures. */
export const S3_ACCESS_KEY = 'S3RVER'
export const S3_SECRET = 'S3RVER'
const BUCKET = 'atrium-test'

/** One request the S3 server received: method, key (after the bucket), query and body length. */
export interface S3Request {
  method: string
  key: string
  query: Record<string, string>
  length: number
}

interface KoaContext {
  method: string
  path: string
  query: Record<string, string>
  status: number
  body: unknown
  get(name: string): string
}
type Middleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>

/**
 * A real S3-compatible server (s3rver) on an ephemeral loopback port with one bucket, in a
 * directory of the test's own, closed after the test. s3rver has no AbortMultipartUpload, so a
 * middleware in front of its routes adds it (dropping the upload's parts) and records each request.
 */
export async function startS3Server(t: TestContext) {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-s3rver-'))
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: BUCKET }],
  })
  const requests: S3Request[] = []
  // A test's way to make the store fail: a request it matches is answered 500 InternalError.
  const failures: { refuse?: (request: S3Request) => boolean } = {}
  const uploadsDirectory = server.store.getResourcePath(BUCKET, undefined, 'uploads')
  const front: Middleware = async (ctx, next) => {
    const [, bucket = '', ...key] = ctx.path.split('/')
    const request = {
      method: ctx.method,
      key: key.join('/'),
      query: { ...ctx.query },
      length: Number(ctx.get('content-length') || 0),
    }
    requests.push(request)
    if (failures.refuse?.(request)) {
      ctx.status = 500
      ctx.body = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code></Error>'
      return
    }
    if (ctx.method === 'DELETE' && bucket === BUCKET && typeof ctx.query.uploadId === 'string') {
      await rm(join(uploadsDirectory, ctx.query.uploadId.replace(/[^0-9a-f]/g, '')), { recursive: true, force: true })
      ctx.status = 204
      ctx.body = null
      return
    }
    await next()
  }
  // Koa composes its middleware when it starts listening: in front of the router, the last one.
  const middleware = (server as unknown as { middleware: Middleware[] }).middleware
  middleware.splice(middleware.length - 1, 0, front)
  const { port } = await server.run()
  t.after(async () => {
    await server.close()
    await rm(directory, { recursive: true, force: true })
  })
  const endpoint = `http://127.0.0.1:${port}`
  async function read(key: string): Promise<Buffer> {
    const object = await server.store.getObject(BUCKET, key)
    if (!object) throw new Error(`the S3 server holds no object ${key}`)
    return buffer(object.content)
  }
  return {
    endpoint,
    bucket: BUCKET,
    requests,
    /** Answers every request `refuse` matches with 500 InternalError (undefined: none). */
    refuse(match: ((request: S3Request) => boolean) | undefined) {
      failures.refuse = match
    },
    /** The Files.S3 settings that reach this server. */
    settings: {
      Endpoint: endpoint,
      Bucket: BUCKET,
      AccessKeyId: S3_ACCESS_KEY,
      SecretAccessKey: S3_SECRET,
      AllowPrivateAddresses: true,
    },
    /** Every object key in the bucket, sorted. */
    async keys(): Promise<string[]> {
      const { objects } = await server.store.listObjects(BUCKET, {})
      return objects.map((object) => object.key).sort()
    },
    /**
     * The committed bytes of an unfinished upload, read from the storage's newest state object
     * (s3-storage.ts): only its tail, so only for uploads shorter than one part.
     */
    async committedBytes(key: string): Promise<Buffer> {
      const prefix = `${key}.info.`
      const offsets = (await this.keys())
        .filter((name) => name.startsWith(prefix))
        .map((name) => Number(name.slice(prefix.length)))
      if (offsets.length === 0) return Buffer.alloc(0)
      const state = JSON.parse((await read(prefix + Math.max(...offsets))).toString('utf8'))
      if (state.parts.length > 0) throw new Error('committedBytes reads only uploads shorter than one part')
      return state.tail === '' ? Buffer.alloc(0) : read(state.tail)
    },
    /** The ids of multipart uploads started and neither completed nor aborted. */
    async multipartUploads(): Promise<string[]> {
      return readdir(uploadsDirectory).catch(() => [])
    },
  }
}

export type S3Server = Awaited<ReturnType<typeof startS3Server>>
