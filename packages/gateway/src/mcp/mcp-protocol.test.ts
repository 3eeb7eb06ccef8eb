import assert from 'node:assert/strict'
import { forEachDialect, json } from '@atrium/platform/testing'
import { MCP_PATH, startMcpStack } from '../../test/mcp.ts'

const ACCEPT = 'application/json, text/event-stream'

forEachDialect('malformed JSON-RPC gets the JSON-RPC error codes, never a crash or HTML', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect, { settings: { Mcp: { MaxBodyBytes: 4096 } } })
  const ann = await stack.user('Ann')
  await stack.allow('user', ann.crmId, ['wallet_balance'])
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${stack.url}${MCP_PATH}`, {
      method: 'POST',
      headers: { ...ann.bearer, 'Content-Type': 'application/json', Accept: ACCEPT, ...headers },
      body,
    })
  const expectError = async (body: string, status: number, code: number, id: unknown = null, headers = {}) => {
    const response = await post(body, headers)
    assert.equal(response.status, status, body.slice(0, 80))
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/)
    const answer = await json(response)
    assert.equal(answer.jsonrpc, '2.0')
    assert.equal(answer.error.code, code, `${body.slice(0, 80)}: ${answer.error.message}`)
    assert.deepEqual(answer.id, id)
    return answer.error.message as string
  }

  await expectError('{"jsonrpc":"2.0","id":1,"method":', 400, -32700)
  await expectError('', 400, -32700)
  await expectError('{"jsonrpc":"1.0","id":1,"method":"tools/list"}', 400, -32600, 1)
  await expectError('{"id":2,"method":"tools/list"}', 400, -32600, 2)
  await expectError('{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', 400, -32600)
  await expectError('"tools/list"', 400, -32600)
  assert.match(await expectError('[]', 400, -32600), /batch/)
  await expectError(
    '[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"ping"}]',
    400,
    -32600,
  )
  await expectError('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":[]}', 400, -32602, 3)
  await expectError('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{}}}', 400, -32602, 4)
  await expectError(
    '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wallet_balance","arguments":"USD"}}',
    400,
    -32602,
    5,
  )
  // Unknown methods and tools reach the MCP server, which answers in a 200 JSON-RPC response.
  await expectError('{"jsonrpc":"2.0","id":6,"method":"wallet/steal"}', 200, -32601, 6)
  await expectError(
    '{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"nope","arguments":{}}}',
    200,
    -32602,
    'x',
  )
  await expectError(
    '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"wallet_balance","arguments":{"currency":"usd"}}}',
    200,
    -32602,
    8,
  )
  const big = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping', params: { pad: 'x'.repeat(5000) } })
  assert.match(await expectError(big, 413, -32600), /larger than 4096 bytes/)
  await expectError('{"jsonrpc":"2.0","id":10,"method":"ping"}', 415, -32000, null, { 'Content-Type': 'text/plain' })
  await expectError('{"jsonrpc":"2.0","id":11,"method":"ping"}', 406, -32000, null, { Accept: 'text/html' })

  // The endpoint still works after all that.
  const ping = await post('{"jsonrpc":"2.0","id":12,"method":"ping"}')
  assert.equal(ping.status, 200)
  assert.match(ping.headers.get('x-request-id') ?? '', /.+/, 'the gateway headers come with the transport answer')
  assert.deepEqual(await json(ping), { jsonrpc: '2.0', id: 12, result: {} })
  const notification = await post('{"jsonrpc":"2.0","method":"notifications/initialized"}')
  assert.equal(notification.status, 202)
})

forEachDialect('GET and DELETE on the stateless endpoint answer 405', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  const ann = await stack.user('Ann')
  for (const method of ['GET', 'DELETE']) {
    const response = await fetch(`${stack.url}${MCP_PATH}`, { method, headers: { ...ann.bearer, Accept: ACCEPT } })
    assert.equal(response.status, 405, method)
    assert.equal(response.headers.get('allow'), 'POST')
    assert.equal((await json(response)).error.code, -32000)
  }
})

forEachDialect('no MCP session is kept: each request stands alone', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  const ann = await stack.user('Ann')
  const initialize = await fetch(`${stack.url}${MCP_PATH}`, {
    method: 'POST',
    headers: { ...ann.bearer, 'Content-Type': 'application/json', Accept: ACCEPT },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  })
  assert.equal(initialize.status, 200)
  assert.equal(initialize.headers.get('mcp-session-id'), null)
  const body = await json(initialize)
  assert.equal(body.result.serverInfo.name, 'atrium-gateway')
  assert.deepEqual(body.result.capabilities.tools, {})
})

forEachDialect('with Mcp.Enabled false there is no MCP endpoint', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect, { settings: { Mcp: { Enabled: false } } })
  const ann = await stack.user('Ann')
  await stack.allow('user', ann.crmId, ['wallet_balance'])
  const response = await fetch(`${stack.url}${MCP_PATH}`, {
    method: 'POST',
    headers: { ...ann.bearer, 'Content-Type': 'application/json', Accept: ACCEPT },
    body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
  })
  assert.equal(response.status, 404)
  assert.equal((await json(response)).error.code, 1004)
})
