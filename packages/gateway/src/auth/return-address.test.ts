import assert from 'node:assert/strict'
import test from 'node:test'
import { ApiError } from '@atrium/platform'
import { returnUrl, validateReturnAddress } from './return-address.ts'

const ATTACKS = [
  'https://evil.example/',
  'http://evil.example',
  'HTTPS://evil.example',
  'evil.example',
  '//evil.example',
  '///evil.example',
  '////evil.example/path',
  '/\\evil.example',
  '\\\\evil.example',
  '/\\/evil.example',
  '/path\\..\\evil',
  '/%2f%2fevil.example',
  '/%2F%2Fevil.example',
  '%2f%2fevil.example',
  '/%5cevil.example',
  '/%5Cevil.example',
  '/%252f%252fevil.example',
  '/%25252f%25252fevil.example',
  '/%255cevil.example',
  '/..//evil.example',
  '/./..//evil.example',
  '/x/../..//evil.example',
  '/%2e%2e//evil.example',
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  '/javascript:alert(1)',
  '/%6Aavascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  ' /chat',
  '/chat\u0000',
  '/\tevil.example',
  '/\t/evil.example',
  '/\n/evil.example',
  '/%09/evil.example',
  '/%0a/evil.example',
  '/%0d%0aSet-Cookie:x=1',
  '/%00',
  '/chat\u2028',
  '/\u3002evil.example',
  '/ʼevil',
  '/%E2%80%A8',
  '/%',
  '/%zz',
  '/%e0%a4%a',
  `/${'a'.repeat(2048)}`,
  '/\u007f',
  '?next=//evil.example',
  '#//evil.example',
  'mailto:a@evil.example',
]

test('return addresses that could leave the site are refused', () => {
  for (const attack of ATTACKS) {
    assert.throws(
      () => validateReturnAddress(attack),
      (error: unknown) => error instanceof ApiError && error.name === 'InvalidReturnAddress',
      JSON.stringify(attack),
    )
  }
})

test('same-site paths are accepted and normalised', () => {
  const cases: [string, string][] = [
    ['', '/'],
    ['/', '/'],
    ['/chat/', '/chat/'],
    ['/chat/c/42?tab=files#last', '/chat/c/42?tab=files#last'],
    ['/chat?code=AbC-123', '/chat?code=AbC-123'],
    ['/a/./b/../c', '/a/c'],
    ['/search?q=caf%C3%A9', '/search?q=caf%C3%A9'],
    ['/chat/feedback/App/7', '/chat/feedback/App/7'],
    ['/docs/metadata:x', '/docs/metadata:x'],
  ]
  for (const [input, expected] of cases) assert.equal(validateReturnAddress(input), expected, input)
})

test('redirects are built from the public origin, whatever the path tries', () => {
  assert.equal(returnUrl('https://atrium.example', '/chat/'), 'https://atrium.example/chat/')
  assert.equal(returnUrl('http://localhost:8080', '/'), 'http://localhost:8080/')
  assert.throws(() => returnUrl('https://atrium.example', '//evil.example'))
})
