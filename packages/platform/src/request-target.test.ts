import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ApiError } from './errors.ts'
import { parseAuthority, parseRequestTarget, requestHost } from './request-target.ts'

test('a Host is host[:port] and nothing else, read in one canonical form', () => {
  assert.deepEqual(parseAuthority('Example.COM.:8080'), {
    hostname: 'example.com',
    port: '8080',
    host: 'example.com:8080',
  })
  assert.deepEqual(parseAuthority('[::1]'), { hostname: '::1', port: '', host: '[::1]' })
  assert.deepEqual(parseAuthority('127.0.0.1:'), { hostname: '127.0.0.1', port: '', host: '127.0.0.1' })
  for (const junk of [
    '',
    'example.com:8080@evil.example',
    'example.com:evil.example',
    'example.com/evil',
    'example.com evil',
    '[::1]evil.example',
    '[::1',
    '[evil.example]',
    'example.com:65536',
    'example.com:-1',
    'a..b',
    '.example.com',
    'user@example.com',
    'exa%6dple.com',
  ]) {
    assert.equal(parseAuthority(junk), undefined, junk)
  }
})

test('HTTP/1 needs exactly one Host line; on HTTP/2 host may repeat :authority but not contradict it', () => {
  assert.equal(requestHost({ httpVersionMajor: 1, rawHeaders: ['Host', 'a.example'] }), 'a.example')
  const refused = (major: number, rawHeaders: string[]) =>
    assert.throws(() => requestHost({ httpVersionMajor: major, rawHeaders }), ApiError, JSON.stringify(rawHeaders))
  refused(1, [])
  refused(1, ['Host', 'a.example', 'HOST', 'a.example'])
  refused(2, [':authority', 'a.example', 'host', 'b.example'])
  refused(2, [])
  assert.equal(
    requestHost({ httpVersionMajor: 2, rawHeaders: [':authority', 'a.example', 'host', 'A.example'] }),
    'a.example',
  )
})

test('a target is matched decoded, without ; parameters or repeated slashes', () => {
  assert.equal(parseRequestTarget('/a;v=1/b;c?x=;/..').path, '/a/b')
  assert.equal(parseRequestTarget('//a%2F%2Fb/c').path, '/a/b/c')
  assert.equal(parseRequestTarget('/caf%C3%A9/[id]').path, '/café/[id]')
  for (const bad of [
    '*',
    'http://evil.example/',
    '/a/../b',
    '/a/..;/b',
    '/a/%2e%2E/b',
    '/a\\b',
    '/%5c',
    '/%00',
    '/%ZZ',
    '/%c0%ae',
    '/a b',
    '/a"b',
    '/a#b',
    '/é',
  ]) {
    assert.throws(() => parseRequestTarget(bad), ApiError, bad)
  }
})
