// The parts of s3rver (it ships no types) that test/s3-server.ts uses.
declare module '@20minutes/s3rver' {
  import type { Readable } from 'node:stream'

  interface S3rverOptions {
    address: string
    port: number
    silent: boolean
    directory: string
    configureBuckets: { name: string }[]
  }

  export default class S3rver {
    constructor(options: S3rverOptions)
    readonly store: {
      getResourcePath(bucket: string, key: string | undefined, resource: string): string
      listObjects(bucket: string, options: { prefix?: string }): Promise<{ objects: { key: string }[] }>
      getObject(bucket: string, key: string): Promise<{ content: Readable } | null>
    }
    run(): Promise<{ address: string; port: number }>
    close(): Promise<void>
  }
}
