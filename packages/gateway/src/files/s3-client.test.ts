import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import { Readable } from 'node:stream'
import { test } from 'node:test'
import type { OutboundClient } from '../outbound/outbound-request.ts'
import { createS3Client, type S3Settings } from './s3-client.ts'

// The example request of the AWS documentation, "Signature Calculations for the Authorization
// Header: Transferring Payload in a Single Chunk (AWS Signature Version 4)", with its signatures.
const example: S3Settings = {
  Endpoint: 'https://s3.amazonaws.com',
  Region: 'us-east-1',
  Bucket: 'examplebucket',
  AccessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  SecretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  ForcePathStyle: false,
  PartSize: 5 * 1024 * 1024,
  AllowPrivateAddresses: false,
  StagingPath: '',
  TimeoutMs: 1000,
}
const at = Date.UTC(2013, 4, 24)

/** An outbound client that records the request it is given and answers `body` with 200. */
function recording(body = '') {
  const sent: { method: string; url: string; headers: Record<string, string> }[] = []
  const outbound = {
    async stream(method: string, url: string, headers: Record<string, string>) {
      sent.push({ method, url, headers })
      return Object.assign(Readable.from([Buffer.from(body)]), { statusCode: 200, headers: {} }) as IncomingMessage
    },
  } as unknown as OutboundClient
  return { sent, outbound }
}

test('a GET with a Range header is signed as in the AWS example (virtual-hosted style)', async () => {
  const { sent, outbound } = recording()
  const s3 = createS3Client(example, outbound, () => at)
  ;(await s3.send({ method: 'GET', key: 'test.txt', headers: { Range: 'bytes=0-9' } })).resume()
  assert.equal(sent[0]?.url, 'https://examplebucket.s3.amazonaws.com/test.txt')
  assert.equal(
    sent[0]?.headers.authorization,
    'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, ' +
      'SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, ' +
      'Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
  )
})

test('path style puts the bucket in the path and signs that path', async () => {
  const { sent, outbound } = recording('<ListBucketResult><Key>a.info.0</Key><Key>a.part.5.x</Key></ListBucketResult>')
  const s3 = createS3Client({ ...example, Endpoint: 'http://127.0.0.1:9000', ForcePathStyle: true }, outbound, () => at)
  assert.deepEqual(await s3.listKeys('a.'), ['a.info.0', 'a.part.5.x'])
  assert.equal(sent[0]?.url, 'http://127.0.0.1:9000/examplebucket?list-type=2&prefix=a.')
  assert.match(
    sent[0]?.headers.authorization ?? '',
    /SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/,
  )
})
