import assert from 'node:assert/strict'
import { forEachDialect, json } from '@atrium/platform/testing'
import { connectMcp, startMcpStack, type UserContact } from '../../test/mcp.ts'
import { downUpstreamUrl } from '../../test/upstream.ts'

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

/** Creates a group chat with the caller as its only member, through the proxy; its id. */
async function teamChat(url: string, browser: Record<string, string>): Promise<string> {
  const created = await fetch(`${url}/msg/v1/create_chat`, {
    method: 'POST',
    headers: browser,
    body: JSON.stringify({ type: 2, name: 'Team', members: [] }),
  })
  return (await json(created)).result.chat.id as string
}

forEachDialect('chat_send posts as the caller and chat_messages reads it back', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  const ann = await stack.user('Ann')
  await stack.allow('user', ann.crmId, ['chat_send', 'chat_messages'])
  const chatId = await teamChat(stack.url, ann.browser)
  const client = await connectMcp(t, stack.url, ann.bearer)

  const content = `Release notes are ready (${Date.now()})`
  const sent = await client.callTool({ name: 'chat_send', arguments: { chat_id: chatId, content } })
  assert.equal(sent.isError, undefined, JSON.stringify(sent.content))
  const message = (sent.structuredContent as { message: { id: string; owner: string; content: string } }).message
  assert.equal(message.content, content)
  assert.equal(message.owner, String(ann.crmId))

  // The chat API shows it as the user's message, as any member sees it.
  const listed = await json(
    await fetch(`${stack.url}/msg/v1/get_chat_messages?chat_id=${chatId}`, { headers: ann.browser }),
  )
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

forEachDialect('wallet_send moves money to another user and wallet_transactions lists it', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  const ann = await stack.user('Ann')
  const bob = await stack.user('Bob')
  await stack.allow('user', ann.crmId, ['wallet_send', 'wallet_transactions'])
  await stack.wallet.deposit(ann.crmId, 'EUR', 50)
  const client = await connectMcp(t, stack.url, ann.bearer)

  const sent = await client.callTool({
    name: 'wallet_send',
    arguments: { to: String(bob.crmId), currency: 'EUR', amount: 12.5, comment: 'lunch', idempotency_key: 'lunch-1' },
  })
  assert.equal(sent.isError, undefined, JSON.stringify(sent.content))
  const result = sent.structuredContent as {
    transaction: { id: string; amount: number; fee: number; partner: { crm_id: string } }
    balance: { available: number }
    replayed: boolean
  }
  assert.equal(result.transaction.amount, -12.5)
  assert.equal(result.transaction.partner.crm_id, String(bob.crmId))
  assert.equal(result.balance.available, 50 - 12.5 - result.transaction.fee)
  assert.equal(result.replayed, false)
  assert.deepEqual(await stack.wallet.user(bob.crmId).read('balance', { currency: 'EUR' }), {
    currency: 'EUR',
    balance: 12.5,
    hold: 0,
    available: 12.5,
  })

  const listed = await client.callTool({ name: 'wallet_transactions', arguments: { currency: 'EUR', limit: 10 } })
  const page = listed.structuredContent as { transactions: { id: string; amount: number; comment: string }[] }
  assert.deepEqual(
    page.transactions.map((tx) => [tx.id, tx.amount, tx.comment]),
    [
      [result.transaction.id, -12.5, 'lunch'],
      [page.transactions[1]?.id, 50, ''],
    ],
  )
})

forEachDialect('user_info asks the CRM as the caller, whatever X-Crm the client sends', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  const ann = await stack.user('Ann')
  const bob = await stack.user('Bob')
  await stack.allow('user', ann.crmId, ['user_info'])
  const spoofed = { 'X-Crm': String(bob.crmId), 'X-Scopes': 'crm:read', 'X-KeyType': 'service' }
  const client = await connectMcp(t, stack.url, { ...ann.bearer, ...spoofed })
  const userInfoRequests = () => stack.crmSeen.filter((request) => request.url.startsWith('/crm/v1/user_info'))

  const own = await client.callTool({ name: 'user_info', arguments: {} })
  assert.equal(own.isError, undefined, JSON.stringify(own.content))
  assert.equal((own.structuredContent as { crm_id: string }).crm_id, String(ann.crmId), 'not Bob, whom X-Crm named')
  const seen = userInfoRequests().at(-1)!
  assert.equal(seen.url, '/crm/v1/user_info')
  assert.equal(seen.headers['x-crm'], String(ann.crmId), 'the identity is the session user, not the spoofed header')
  assert.equal(seen.headers['x-scopes'], undefined)
  assert.equal(seen.headers['x-keytype'], 'session')
  assert.equal(seen.headers['mcp-protocol-version'], undefined, "the client's MCP headers stay at the gateway")
  // The spoofed service key type would have shown Bob's contacts; the session user sees none.
  const other = await client.callTool({ name: 'user_info', arguments: { crm_id: String(bob.crmId) } })
  assert.deepEqual((other.structuredContent as { contacts: unknown[] }).contacts, [])

  // Nobody has this id: the CRM's 404 envelope comes back as a tool error with its code and message.
  const unknown = String(Math.max(ann.crmId, bob.crmId) + 1000)
  const missing = await client.callTool({ name: 'user_info', arguments: { crm_id: unknown } })
  assert.equal(missing.isError, true)
  assert.deepEqual(JSON.parse((missing.content as { text: string }[])[0]!.text), {
    error: { code: 1004, message: `no profile ${unknown}` },
  })
  assert.equal(userInfoRequests().length, 3)
})

forEachDialect(
  'user_info returns the CRM profile of the caller, and another user’s without contacts',
  async (t, dialect) => {
    const stack = await startMcpStack(t, dialect)
    const annContacts: UserContact[] = [
      { kind: 'email', value: 'ann@example.com', verified: true },
      { kind: 'phone', value: '+4915112345678', verified: false },
    ]
    const ann = await stack.user('Ann', annContacts)
    const bob = await stack.user('Bob', [{ kind: 'email', value: 'bob@example.com', verified: true }])
    await stack.allow('user', ann.crmId, ['user_info'])
    const client = await connectMcp(t, stack.url, ann.bearer)

    // The gateway's profile sync filled the CRM: the name, the contacts with their verified flags, the creation time.
    const own = await client.callTool({ name: 'user_info', arguments: {} })
    assert.equal(own.isError, undefined, JSON.stringify(own.content))
    assert.deepEqual(own.structuredContent, {
      crm_id: String(ann.crmId),
      name: 'Ann',
      contacts: annContacts,
      created: new Date(ann.created).toISOString(),
    })
    // Another user's contacts are private at the CRM; the tool passes its answer through.
    const other = await client.callTool({ name: 'user_info', arguments: { crm_id: String(bob.crmId) } })
    assert.equal(other.isError, undefined, JSON.stringify(other.content))
    assert.deepEqual(other.structuredContent, {
      crm_id: String(bob.crmId),
      name: 'Bob',
      contacts: [],
      created: new Date(bob.created).toISOString(),
    })
    assert.equal(stack.crmSeen.at(-1)?.url, `/crm/v1/user_info?crm_id=${bob.crmId}`)
  },
)

forEachDialect('a tool whose module has no route answers which module is not routed', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  await stack.store.routes.remove('/crm/')
  await stack.store.routes.refresh()
  const ann = await stack.user('Ann')
  await stack.allow('user', ann.crmId, ['user_info'])
  const client = await connectMcp(t, stack.url, ann.bearer)

  const answer = await client.callTool({ name: 'user_info', arguments: {} })
  assert.equal(answer.isError, true)
  const { error } = JSON.parse((answer.content as { text: string }[])[0]!.text)
  assert.equal(error.code, 2203)
  assert.match(error.message, /the crm module is not routed/)
  // The CRM is up and got the profile sync, but no user_info request.
  assert.ok(stack.crmSeen.some((request) => request.url === '/private/v1/set_profiles'))
  assert.deepEqual(
    stack.crmSeen.filter((request) => !request.url.startsWith('/private/')),
    [],
  )
})

forEachDialect('a module refusal comes back as a tool error with the module code', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  const ann = await stack.user('Ann')
  const bob = await stack.user('Bob')
  await stack.allow('user', bob.crmId, ['chat_send'])
  const created = await fetch(`${stack.url}/msg/v1/create_chat`, {
    method: 'POST',
    headers: ann.browser,
    body: JSON.stringify({ type: 2, name: 'Private', members: [] }),
  })
  const chatId = (await json(created)).result.chat.id as string
  const client = await connectMcp(t, stack.url, bob.bearer)

  const answer = await client.callTool({ name: 'chat_send', arguments: { chat_id: chatId, content: 'let me in' } })
  assert.equal(answer.isError, true)
  assert.equal(JSON.parse((answer.content as { text: string }[])[0]!.text).error.code, 3000, 'not a member')
})

forEachDialect('chat_send refuses NUL and other control characters before the chat module', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect)
  const ann = await stack.user('Ann')
  await stack.allow('user', ann.crmId, ['chat_send'])
  const chatId = await teamChat(stack.url, ann.browser)
  const client = await connectMcp(t, stack.url, ann.bearer)

  for (const content of ['a\u0000b', 'bell\u0007', '']) {
    await assert.rejects(
      client.callTool({ name: 'chat_send', arguments: { chat_id: chatId, content } }),
      (error: Error & { code?: number }) => error.code === -32602 && /content/.test(error.message),
      JSON.stringify(content),
    )
  }
  await assert.rejects(
    client.callTool({ name: 'chat_send', arguments: { chat_id: Number(chatId), content: 'x' } }),
    (error: Error & { code?: number }) => error.code === -32602 && /chat_id/.test(error.message),
  )
  const listed = await json(
    await fetch(`${stack.url}/msg/v1/get_chat_messages?chat_id=${chatId}`, { headers: ann.browser }),
  )
  assert.deepEqual(listed.result.messages, [], 'nothing was written')
})

forEachDialect('a tool call skips an instance of its module that is down', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect, { chatInstancesBefore: [await downUpstreamUrl()] })
  const ann = await stack.user('Ann')
  await stack.allow('user', ann.crmId, ['chat_send'])
  const chatId = await teamChat(stack.url, ann.browser)
  const client = await connectMcp(t, stack.url, ann.bearer)
  for (const content of ['first', 'second', 'third']) {
    const sent = await client.callTool({ name: 'chat_send', arguments: { chat_id: chatId, content } })
    assert.equal(sent.isError, undefined, JSON.stringify(sent.content))
  }
  const listed = await json(
    await fetch(`${stack.url}/msg/v1/get_chat_messages?chat_id=${chatId}`, { headers: ann.browser }),
  )
  assert.deepEqual(listed.result.messages.map((message: { content: string }) => message.content).sort(), [
    'first',
    'second',
    'third',
  ])
})

forEachDialect('a module that is down or answers too much fails the tool with BadGateway', async (t, dialect) => {
  const stack = await startMcpStack(t, dialect, { settings: { Mcp: { MaxAnswerBytes: 2048 } } })
  const ann = await stack.user('Ann')
  await stack.allow('user', ann.crmId, ['chat_send', 'chat_messages', 'user_info'])
  const chatId = await teamChat(stack.url, ann.browser)
  const client = await connectMcp(t, stack.url, ann.bearer)
  const codeOf = (result: unknown) =>
    JSON.parse((result as { content: { text: string }[] }).content[0]!.text).error.code as number

  const sent = await client.callTool({ name: 'chat_send', arguments: { chat_id: chatId, content: 'x'.repeat(3000) } })
  assert.equal(sent.isError, true, 'the answer echoes the 3000 characters')
  assert.equal(codeOf(sent), 2000)
  // The message was sent all the same: the limit is on what the gateway reads back.
  const listed = await json(
    await fetch(`${stack.url}/msg/v1/get_chat_messages?chat_id=${chatId}`, { headers: ann.browser }),
  )
  assert.equal(listed.result.messages.length, 1)

  await stack.store.routes.remove('/crm/')
  await stack.store.routes.add({ prefix: '/crm/', upstream: 'http://127.0.0.1:9' })
  await stack.store.routes.refresh()
  const down = await client.callTool({ name: 'user_info', arguments: {} })
  assert.equal(codeOf(down), 2000)
})
