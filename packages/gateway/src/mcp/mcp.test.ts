import assert from 'node:assert/strict'
import { forEachDialect, json } from '@atrium/platform/testing'
import { connectMcp, MCP_PATH, startMcpStack } from '../../test/mcp.ts'

forEachDialect('an assistant with a session token sees and calls only its granted tools', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  const ann = await stack.user('Ann')
  await stack.allow('user', ann.crmId, ['wallet_balance', 'chat_send', 'chat_messages'])
  const client = await connectMcp(t, stack.url, ann.bearer)

  assert.equal(client.getServerVersion()?.name, 'atrium-gateway')
  const { tools } = await client.listTools()
  assert.deepEqual(
    tools.map((tool) => tool.name),
    ['wallet_balance', 'chat_messages', 'chat_send'],
  )
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, 'object', `${tool.name} has an input schema`)
    assert.equal(tool.outputSchema?.type, 'object', `${tool.name} has an output schema`)
    assert.ok((tool.description ?? '').length > 40, `${tool.name} is described`)
  }

  await stack.wallet.deposit(ann.crmId, 'USD', 42.5)
  const balance = await client.callTool({ name: 'wallet_balance', arguments: { currency: 'USD' } })
  assert.equal(balance.isError, undefined)
  assert.deepEqual(balance.structuredContent, { currency: 'USD', balance: 42.5, hold: 0, available: 42.5 })
})

forEachDialect('chat_send posts as the caller and chat_messages reads it back', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  const ann = await stack.user('Ann')
  await stack.allow('user', ann.crmId, ['chat_send', 'chat_messages'])
  const created = await fetch(`${stack.url}/msg/v1/create_chat`, {
    method: 'POST',
    headers: ann.browser,
    body: JSON.stringify({ type: 2, name: 'Team', members: [] }),
  })
  const chatId = (await json(created)).result.chat.id as string
  const client = await connectMcp(t, stack.url, ann.bearer)

  const content = `Release notes are ready (${Date.now()})`
  const sent = await client.callTool({ name: 'chat_send', arguments: { chat_id: chatId, content } })
  assert.equal(sent.isError, undefined, JSON.stringify(sent.content))
  const message = (sent.structuredContent as { message: { id: string; owner: string; content: string } }).message
  assert.equal(message.content, content)
  assert.equal(message.owner, String(ann.crmId))

  // The chat API shows it as the user's message, as any member sees it.
  const listed = await json(await fetch(`${stack.url}/msg/v1/get_chat_messages?chat_id=${chatId}`, { headers: ann.browser }))
  assert.deepEqual(
    listed.result.messages.map((item: { id: string; content: string }) => [item.id, item.content]),
    [[message.id, content]],
  )
  const read = await client.callTool({ name: 'chat_messages', arguments: { chat_id: chatId, limit: 5 } })
  const page = read.structuredContent as { messages: { id: string }[]; has_more: boolean }
  assert.deepEqual(
    page.messages.map((item) => item.id),
    [message.id],
  )
  assert.equal(page.has_more, false)
})
