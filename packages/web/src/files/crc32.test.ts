import assert from 'node:assert/strict'
import { test } from 'node:test'
import { crc32 as zlibCrc32 } from 'node:zlib'
import { crc32, uploadChecksum } from './crc32.ts'

const text = (value: string) => new TextEncoder().encode(value)

test('crc32 gives the standard check values', () => {
  assert.equal(crc32(new Uint8Array()), 0)
  assert.equal(crc32(text('123456789')), 0xcbf43926)
  assert.equal(crc32(text('The quick brown fox jumps over the lazy dog')), 0x414fa339)
  assert.equal(crc32(text('a')), 0xe8b7be43)
})

test('crc32 agrees with zlib on every byte value and on a megabyte of varied bytes', () => {
  const all = Uint8Array.from({ length: 256 }, (_, i) => i)
  assert.equal(crc32(all), zlibCrc32(all))
  const big = Uint8Array.from({ length: 1 << 20 }, (_, i) => (i * 2654435761) >>> 24)
  assert.equal(crc32(big), zlibCrc32(big))
})

test('the upload checksum is crc32 and the base64 of the 4 big-endian bytes', () => {
  assert.equal(uploadChecksum(text('123456789')), `crc32 ${Buffer.from([0xcb, 0xf4, 0x39, 0x26]).toString('base64')}`)
  assert.equal(uploadChecksum(new Uint8Array()), 'crc32 AAAAAA==')
  const bytes = text('hello world')
  const expected = Buffer.alloc(4)
  expected.writeUInt32BE(zlibCrc32(bytes))
  assert.equal(uploadChecksum(bytes), `crc32 ${expected.toString('base64')}`)
})
