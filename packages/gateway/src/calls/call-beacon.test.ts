import assert from 'node:assert/strict'
import { RouteFlags } from '@atrium/platform'
import { forEachDialect, json } from '@atrium/platform/testing'
import { startChat } from '../../../chat/test/support.ts'
import { SERVICE_SECRET, signedInUser, startGateway } from '../../test/support.ts'

const OFFER_SDP = 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n'

/**
 * The page's last word when it goes away (spec: "stale-call cleanup by ... browser pagehide"):
 * navigator.sendBeacon cannot carry X-CSRF-Token, so the gateway refuses it like any forged
 * cookie POST; the client ends the call with fetch(..., {keepalive: true}) instead, which
 * outlives the page as a beacon does and carries the token (docs/calls.md, "Leaving the page").
 */
forEachDialect(
  'a beacon without the CSRF token cannot end a call; the keepalive request with it does',
  async (t, dialect) => {
    const chat = await startChat(t, dialect, { ServiceSecret: SERVICE_SECRET })
    const gateway = await startGateway(t, dialect, {
      settings: { Modules: { chat: chat.base }, PublicOrigin: 'http://127.0.0.1:1' },
    })
    await gateway.store.routes.add({ prefix: '/msg/', upstream: 'chat', flags: RouteFlags.RequireSession })
    const alice = await signedInUser(gateway)
    const bob = await signedInUser(gateway)
    const post = (headers: Record<string, string>, operation: string, body: object) =>
      fetch(`${gateway.url}/msg/v1/${operation}`, { method: 'POST', headers, body: JSON.stringify(body) })
    const opened = await json(await post(alice.headers, 'create_private_chat', { peer: String(bob.crmId) }))
    const started = await json(
      await post(alice.headers, 'call/initiate', { chat_id: opened.result.chat.id, media: 'audio', sdp: OFFER_SDP }),
    )
    const callId = started.result.call.call_id

    // What sendBeacon sends: the cookie, the page's Origin, a text/plain body, and no token.
    const beacon = await fetch(`${gateway.url}/msg/v1/call/end`, {
      method: 'POST',
      headers: {
        Cookie: alice.headers.Cookie,
        Origin: 'http://127.0.0.1:1',
        'Content-Type': 'text/plain;charset=UTF-8',
      },
      body: JSON.stringify({ call_id: callId }),
    })
    assert.deepEqual([beacon.status, (await json(beacon)).error.code], [403, 2004])
    // Another site's page cannot end it either, even guessing the body.
    const forged = await post({ ...alice.headers, Origin: 'https://evil.example' }, 'call/end', { call_id: callId })
    assert.equal(forged.status, 403)
    const history = await json(await fetch(`${gateway.url}/msg/v1/call/history`, { headers: bob.headers }))
    assert.equal(history.result.calls[0].state, 'ringing')

    // The client's pagehide request: same origin, the session's token, keepalive.
    const leaving = await fetch(`${gateway.url}/msg/v1/call/end`, {
      method: 'POST',
      headers: { ...alice.headers, Origin: 'http://127.0.0.1:1' },
      body: JSON.stringify({ call_id: callId }),
      keepalive: true,
    })
    const ended = await json(leaving)
    assert.equal(leaving.status, 200, JSON.stringify(ended))
    assert.deepEqual([ended.result.call.state, ended.result.call.end_reason], ['ended', 'cancelled'])
  },
)
