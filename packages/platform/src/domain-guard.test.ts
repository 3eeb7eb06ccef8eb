import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import { test } from 'node:test'
import { createDomainGuard } from './domain-guard.ts'
import type { Authority, RequestTarget } from './request-target.ts'

/** A request as the guard reads it: one Host line and a target. */
function requestFor(host: string, url = '/x') {
  const raw = { httpVersionMajor: 1, rawHeaders: ['Host', host] } as unknown as IncomingMessage
  return { raw, host, url, authority: undefined as unknown as Authority, target: undefined as unknown as RequestTarget }
}

function refusal(guard: ReturnType<typeof createDomainGuard>, host: string): string | undefined {
  try {
    guard(requestFor(host))
    return undefined
  } catch (error) {
    return (error as Error).name
  }
}

test('the guard judges each Host on its own, whatever host the request before it named', () => {
  const guard = createDomainGuard({ domain: 'atrium.test', devHost: '' })
  const hosts: [string, string | undefined][] = [
    ['p1.atrium.test', undefined],
    ['p1.atrium.test', undefined],
    ['p1.atrium.test.evil', 'MisdirectedHost'],
    ['p1.atrium.test', undefined],
    ['p1.atrium.test:99999', 'BadRequest'],
    ['p1.atrium.test:8443', undefined],
    ['P1.Atrium.Test:8443', undefined],
    ['evil.test', 'MisdirectedHost'],
    ['evil.test', 'MisdirectedHost'],
    ['atrium.test:8443 junk', 'BadRequest'],
    ['localhost', undefined],
  ]
  for (const [host, expected] of hosts) assert.equal(refusal(guard, host), expected, host)
})

test('requests naming the same host get its canonical authority, which no request can change', () => {
  const guard = createDomainGuard({ domain: 'atrium.test', devHost: '' })
  const first = requestFor('P2.atrium.test.:8443')
  const second = requestFor('P2.atrium.test.:8443')
  guard(first)
  guard(second)
  assert.deepEqual({ ...second.authority }, { hostname: 'p2.atrium.test', port: '8443', host: 'p2.atrium.test:8443' })
  assert.throws(() => {
    ;(first.authority as { host: string }).host = 'evil.test'
  }, TypeError)
  assert.equal(second.authority.host, 'p2.atrium.test:8443')
})
