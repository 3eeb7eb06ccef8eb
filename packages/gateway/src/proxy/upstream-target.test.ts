import assert from 'node:assert/strict'
import { test } from 'node:test'
import { upstreamPath } from './upstream-target.ts'

const target = { origin: 'http://127.0.0.1:9101', basePath: '/base' }

/** What the WHATWG URL parser makes of the target after the base path: the rule upstreamPath keeps. */
function parsed(requestUrl: string): string {
  const url = new URL(target.origin + target.basePath + requestUrl)
  return url.pathname + url.search
}

test('a plain request target is sent as the URL parser would send it, unparsed', () => {
  for (const requestUrl of [
    '/msg/v1/send_message',
    '/msg/v1/get_chat_messages?chat_id=896021547139072&limit=50',
    '/a/b;c=d/e:f@g!$&()*+,~_-',
    '//x/y',
    '/a?b?c=/d',
    '/',
  ]) {
    assert.equal(upstreamPath(target, requestUrl), parsed(requestUrl), requestUrl)
    assert.equal(upstreamPath(target, requestUrl), target.basePath + requestUrl, requestUrl)
  }
})

test('dot segments, escapes and characters the parser encodes go through the parser', () => {
  const cases: [string, string][] = [
    ['/msg/../admin', '/base/admin'],
    ['/msg/%2e%2e/admin', '/base/admin'],
    ['/msg/./x', '/base/msg/x'],
    // `..` climbs out of the base path too: what the module receives is what the parser made of it.
    ['/../admin', '/admin'],
    ['/a\\b', '/base/a/b'],
    ['/a"b<c>`{}', '/base/a%22b%3Cc%3E%60%7B%7D'],
    ["/q?x='y' z", '/base/q?x=%27y%27%20z'],
    ['/q?', '/base/q'],
    ['/%41', '/base/%41'],
  ]
  for (const [requestUrl, expected] of cases) {
    assert.equal(upstreamPath(target, requestUrl), expected, requestUrl)
    assert.equal(parsed(requestUrl), expected, `the parser: ${requestUrl}`)
  }
})

test('whatever the target, the result is the URL parser’s (20,000 random targets)', () => {
  // Every character class, and a few near the fast path's edge (dots, slashes, `?`, escapes).
  const alphabets = ['abcXYZ019-_.~!$&\'()*+,;=:@/?#%\\"<>`{}^| é\t', 'a/.?;=%2E']
  let seed = 7
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
    return seed
  }
  for (let round = 0; round < 20_000; round++) {
    const alphabet = alphabets[round % 2]!
    let requestUrl = '/'
    for (let length = next() % 24; length > 0; length--) requestUrl += alphabet[next() % alphabet.length]
    assert.equal(upstreamPath(target, requestUrl), parsed(requestUrl), JSON.stringify(requestUrl))
  }
})
