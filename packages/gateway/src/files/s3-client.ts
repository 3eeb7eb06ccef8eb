import { createHash, createHmac } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { Readable } from 'node:stream'
import type { GatewayConfig } from '../config.ts'
import type { OutboundClient } from '../outbound/outbound-request.ts'

export type S3Settings = GatewayConfig['Files']['S3']

/** An S3 request answered with an error status: the HTTP status and S3's error code (`NoSuchKey` …). */
export class S3Error extends Error {
  override name = 'S3Error'
  readonly status: number
  readonly code: string
  constructor(status: number, code: string, message: string) {
    super(message)
    this.status = status
    this.code = code
  }
}

// Streamed bodies are not hashed before they are sent; AWS and MinIO accept this over any transport.
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD'
const EMPTY_SHA256 = createHash('sha256').update('').digest('hex')

/** RFC 3986 percent-encoding, as SigV4 wants it (encodeURIComponent leaves `!'()*` alone). */
function encodeRfc3986(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

function hmac(key: Buffer | string, text: string): Buffer {
  return createHmac('sha256', key).update(text).digest()
}

/** The text of every `<tag>…</tag>` in an S3 XML answer (only simple, unnested values are read). */
export function xmlValues(xml: string, tag: string): string[] {
  const values: string[] = []
  for (const match of xml.matchAll(new RegExp(`<${tag}>([^<]*)</${tag}>`, 'g'))) {
    values.push(
      (match[1] ?? '')
        .replaceAll('&quot;', '"')
        .replaceAll('&apos;', "'")
        .replaceAll('&lt;', '<')
        .replaceAll('&gt;', '>')
        .replaceAll('&amp;', '&'),
    )
  }
  return values
}

async function readText(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of response) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

export interface S3Request {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE'
  key: string
  query?: Record<string, string>
  headers?: Record<string, string>
  body?: { stream: Readable | Buffer; length: number }
}

/**
 * Signed requests (AWS Signature Version 4) to one bucket of an S3-compatible store, sent through
 * the outbound client, so the endpoint's address is checked like any other outbound request.
 */
export function createS3Client(settings: S3Settings, outbound: OutboundClient, now: () => number = Date.now) {
  const endpoint = new URL(settings.Endpoint)
  const base = endpoint.pathname.replace(/\/+$/, '')

  function urlOf(key: string, query: Record<string, string>): URL {
    const url = new URL(endpoint)
    // An empty key addresses the bucket itself (a listing).
    const path = key === '' ? '' : `/${key.split('/').map(encodeRfc3986).join('/')}`
    if (settings.ForcePathStyle) {
      url.pathname = `${base}/${encodeRfc3986(settings.Bucket)}${path}`
    } else {
      url.hostname = `${settings.Bucket}.${endpoint.hostname}`
      url.pathname = `${base}${path || '/'}`
    }
    url.search = Object.entries(query)
      .map(([name, value]) => `${encodeRfc3986(name)}=${encodeRfc3986(value)}`)
      .join('&')
    return url
  }

  /** The request's headers with x-amz-date, x-amz-content-sha256 and its Authorization. */
  function sign(method: string, url: URL, query: Record<string, string>, extra: Record<string, string>, hash: string) {
    const stamp = new Date(now())
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}/, '')
    const day = stamp.slice(0, 8)
    const headers: Record<string, string> = {
      ...Object.fromEntries(Object.entries(extra).map(([name, value]) => [name.toLowerCase(), value.trim()])),
      host: url.host,
      'x-amz-content-sha256': hash,
      'x-amz-date': stamp,
    }
    const names = Object.keys(headers).sort()
    const canonicalQuery = Object.entries(query)
      .map(([name, value]) => [encodeRfc3986(name), encodeRfc3986(value)])
      .sort(([a = ''], [b = '']) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, value]) => `${name}=${value}`)
      .join('&')
    const canonical = [
      method,
      url.pathname,
      canonicalQuery,
      ...names.map((name) => `${name}:${headers[name]}`),
      '',
      names.join(';'),
      hash,
    ].join('\n')
    const scope = `${day}/${settings.Region}/s3/aws4_request`
    const toSign = ['AWS4-HMAC-SHA256', stamp, scope, createHash('sha256').update(canonical).digest('hex')].join('\n')
    const key = hmac(hmac(hmac(hmac(`AWS4${settings.SecretAccessKey}`, day), settings.Region), 's3'), 'aws4_request')
    const signature = createHmac('sha256', key).update(toSign).digest('hex')
    headers.authorization = `AWS4-HMAC-SHA256 Credential=${settings.AccessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`
    return headers
  }

  /**
   * Sends one request and resolves with its answer when the status is 2xx (206 for ranges);
   * otherwise reads the error document and rejects with S3Error.
   */
  async function send({ method, key, query = {}, headers = {}, body }: S3Request): Promise<IncomingMessage> {
    const url = urlOf(key, query)
    const hash = body === undefined ? EMPTY_SHA256 : UNSIGNED_PAYLOAD
    const response = await outbound.stream(method, url.href, sign(method, url, query, headers, hash), body)
    const status = response.statusCode ?? 0
    if (status >= 200 && status < 300) return response
    const text = await readText(response)
    const code = xmlValues(text, 'Code')[0] ?? (status === 404 ? 'NoSuchKey' : `HTTP${status}`)
    const message = xmlValues(text, 'Message')[0] ?? ''
    throw new S3Error(status, code, `S3 ${method} ${key} answered ${status} ${code}${message ? `: ${message}` : ''}`)
  }

  /** Sends a request and reads its whole (small, XML) answer. */
  async function call(request: S3Request): Promise<string> {
    return readText(await send(request))
  }

  return {
    send,

    /** Stores `body` as the object `key`. */
    async putObject(key: string, body: { stream: Readable | Buffer; length: number }): Promise<void> {
      await call({ method: 'PUT', key, body })
    },

    /** Deletes the object `key`; a missing one is no error (S3 answers 204 either way). */
    async deleteObject(key: string): Promise<void> {
      await call({ method: 'DELETE', key })
    },

    /** Starts a multipart upload of `key` and returns its UploadId. */
    async createMultipartUpload(key: string): Promise<string> {
      const id = xmlValues(await call({ method: 'POST', key, query: { uploads: '' } }), 'UploadId')[0]
      if (!id) throw new S3Error(502, 'MalformedAnswer', `S3 gave no UploadId for ${key}`)
      return id
    },

    /** Uploads part `partNumber` (from 1) and returns its ETag. */
    async uploadPart(
      key: string,
      uploadId: string,
      partNumber: number,
      body: { stream: Readable | Buffer; length: number },
    ): Promise<string> {
      const response = await send({
        method: 'PUT',
        key,
        query: { partNumber: String(partNumber), uploadId },
        body,
      })
      response.resume()
      const etag = response.headers.etag
      if (!etag) throw new S3Error(502, 'MalformedAnswer', `S3 gave no ETag for part ${partNumber} of ${key}`)
      return etag
    },

    /** Joins the parts (their ETags in order) into the object `key`. */
    async completeMultipartUpload(key: string, uploadId: string, etags: string[]): Promise<void> {
      const parts = etags
        .map(
          (etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${etag.replaceAll('"', '&quot;')}</ETag></Part>`,
        )
        .join('')
      const xml = Buffer.from(`<CompleteMultipartUpload>${parts}</CompleteMultipartUpload>`)
      const text = await call({ method: 'POST', key, query: { uploadId }, body: { stream: xml, length: xml.length } })
      // S3 may answer 200 and still fail the completion, with an Error document as the body.
      const code = xmlValues(text, 'Code')[0]
      if (code)
        throw new S3Error(500, code, `S3 could not complete ${key}: ${code} ${xmlValues(text, 'Message')[0] ?? ''}`)
    },

    /** Aborts a multipart upload, dropping its parts; one already gone is no error. */
    async abortMultipartUpload(key: string, uploadId: string): Promise<void> {
      try {
        await call({ method: 'DELETE', key, query: { uploadId } })
      } catch (error) {
        if (!(error instanceof S3Error && error.code === 'NoSuchUpload')) throw error
      }
    },

    /** Every key that starts with `prefix` (ListObjectsV2, page by page). */
    async listKeys(prefix: string): Promise<string[]> {
      const keys: string[] = []
      let token: string | undefined
      do {
        const query: Record<string, string> = { 'list-type': '2', prefix }
        if (token) query['continuation-token'] = token
        const text = await call({ method: 'GET', key: '', query })
        keys.push(...xmlValues(text, 'Key'))
        token = xmlValues(text, 'IsTruncated')[0] === 'true' ? xmlValues(text, 'NextContinuationToken')[0] : undefined
      } while (token)
      return keys
    },
  }
}

export type S3Client = ReturnType<typeof createS3Client>
