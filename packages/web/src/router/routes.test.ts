import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseRoute, type Route, routePath, safeNext } from './routes.ts'

test('the spec routes parse into their screens', () => {
  const cases: Array<[string, string, Route]> = [
    ['/chat/', '', { name: 'messenger' }],
    ['/chat', '', { name: 'messenger' }],
    ['/chat/c/890844816171008', '', { name: 'messenger', chatId: '890844816171008' }],
    ['/chat/c/42/', '', { name: 'messenger', chatId: '42' }],
    ['/chat/', '?code=Xy7-abc', { name: 'guest', code: 'Xy7-abc' }],
    ['/chat/support', '', { name: 'support' }],
    ['/chat/account', '', { name: 'account' }],
    ['/chat/calls', '', { name: 'calls' }],
    ['/chat/feedback/3/77', '', { name: 'feedback', type: '3', id: '77' }],
    ['/chat/files/12', '', { name: 'files', chatId: '12' }],
    ['/chat/discuss/order/A-19', '', { name: 'discuss', type: 'order', id: 'A-19' }],
    ['/chat/sign-in', '?next=%2Fchat%2Fc%2F5', { name: 'sign-in', next: '/chat/c/5' }],
  ]
  for (const [pathname, search, route] of cases)
    assert.deepEqual(parseRoute(pathname, search), route, pathname + search)
})

test('malformed ids and unknown paths are not found, never a screen with a wrong id', () => {
  for (const path of [
    '/chat/c/abc',
    '/chat/c/0',
    '/chat/c/',
    '/chat/c/1/2',
    '/chat/files/x',
    '/chat/nope',
    '/other/',
  ]) {
    assert.deepEqual(parseRoute(path), { name: 'not-found', path }, path)
  }
  assert.equal(parseRoute('/chat/', '?code=').name, 'not-found')
  assert.equal(parseRoute('/chat/', '?code=a%20b').name, 'not-found')
})

test('routePath builds the path each route is parsed from', () => {
  const routes: Route[] = [
    { name: 'messenger' },
    { name: 'messenger', chatId: '77' },
    { name: 'guest', code: 'abc-123' },
    { name: 'sign-in', next: '/chat/' },
    { name: 'sign-in', next: '/chat/c/9?x=1' },
    { name: 'support' },
    { name: 'account' },
    { name: 'calls' },
    { name: 'feedback', type: '2', id: '5' },
    { name: 'files', chatId: '3' },
    { name: 'discuss', type: 'product', id: 'p1' },
  ]
  for (const route of routes) {
    const url = new URL(routePath(route), 'http://localhost')
    assert.deepEqual(parseRoute(url.pathname, url.search), route, routePath(route))
  }
})

test('after sign-in only paths of the client and the operator pages are followed', () => {
  assert.equal(safeNext('/chat/c/5'), '/chat/c/5')
  assert.equal(safeNext('/ProxyAdmin/Users?Search=ann'), '/ProxyAdmin/Users?Search=ann')
  assert.equal(safeNext('/ChatAdmin/Chats'), '/ChatAdmin/Chats')
  // A copied message link comes back to its message.
  assert.equal(safeNext('/chat/c/5#message-896279291166720'), '/chat/c/5#message-896279291166720')
  const signIn = routePath({ name: 'sign-in', next: '/chat/c/5#message-7' })
  const back = new URL(signIn, 'http://localhost')
  assert.deepEqual(parseRoute(back.pathname, back.search), { name: 'sign-in', next: '/chat/c/5#message-7' })
  for (const next of [
    null,
    '',
    'https://evil.example/chat/',
    '//evil.example/chat/',
    '/admin/',
    '/chat/\\evil',
    '/ProxyAdminX/',
    '/ProxyAdmin/\\evil',
  ]) {
    assert.equal(safeNext(next), '/chat/', String(next))
  }
})
