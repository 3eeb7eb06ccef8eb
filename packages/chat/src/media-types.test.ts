import assert from 'node:assert/strict'
import { test } from 'node:test'
import { signedHeaders } from '@atrium/platform'
import { json } from '@atrium/platform/testing'
import { SERVICE_SECRET, startChat } from '../test/support.ts'

// Types that are not JSON, spelled the ways clients send them; and JSON spelled the ways it may be.
const NOT_JSON = [
  'text/plain',
  'text/plain; charset=utf-8',
  'TEXT/PLAIN',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'text/json',
  'application/jsonp',
  'application/json-seq',
  'application/xml',
]
const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'Application/JSON']

test('every POST operation refuses a body that is not JSON with 415/1003, whatever its media type', async (t) => {
  const chat = await startChat(t, 'sqlite')
  await chat.register(1, 2)
  const document = await json(await fetch(`${chat.base}/private/v1/openapi.json`))
  const posts = Object.entries(document.paths as Record<string, Record<string, unknown>>)
    .filter(([, operations]) => 'post' in operations)
    .map(([path]) => path)
  assert.ok(posts.includes('/msg/v1/send_message') && posts.includes('/private/v1/set_profile'), posts.join())

  // A body its operation would accept as JSON, so only the media type can be the reason.
  const body = JSON.stringify({ chat_id: '1', content: 'hi' })
  for (const path of posts) {
    for (const type of NOT_JSON) {
      const headers = signedHeaders(SERVICE_SECRET, 'POST', path, { 'X-Crm': '1', 'content-type': type })
      const response = await fetch(`${chat.base}${path}`, { method: 'POST', headers, body })
      const envelope = await json(response)
      assert.equal(response.status, 415, `${path} as ${type}: ${JSON.stringify(envelope)}`)
      assert.equal(envelope.error?.code, 1003, `${path} as ${type}`)
      assert.equal(typeof envelope.id, 'string')
      assert.equal(envelope.result, undefined)
    }
  }
})

test('send_message takes JSON in any spelling of its media type, and nothing else', async (t) => {
  const chat = await startChat(t, 'sqlite')
  await chat.register(1, 2)
  const { chat: direct } = await chat.user(1).ok('create_private_chat', { peer: '2' })
  const path = '/msg/v1/send_message'
  const send = (type: string, content: string) =>
    fetch(`${chat.base}${path}`, {
      method: 'POST',
      headers: signedHeaders(SERVICE_SECRET, 'POST', path, { 'X-Crm': '1', 'content-type': type }),
      body: JSON.stringify({ chat_id: direct.id, content }),
    })
  for (const type of JSON_TYPES) assert.equal((await send(type, type)).status, 200, type)
  for (const type of NOT_JSON) assert.equal((await send(type, type)).status, 415, type)
  const { messages } = await chat.user(2).read('get_chat_messages', { chat_id: direct.id })
  assert.deepEqual(messages.map((message: { content: string }) => message.content).reverse(), JSON_TYPES)
})
