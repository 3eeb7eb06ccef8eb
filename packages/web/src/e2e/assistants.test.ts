import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTestDatabaseUrl } from '@atrium/platform/testing'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Page } from 'playwright-core'
import { runCli } from '../../../gateway/src/cli/cli.ts'
import { SERVICE_SECRET } from '../../../gateway/test/support.ts'
import { checkAccessibility } from './accessibility.ts'
import { openPrivateChat, signedInPerson } from './steps.ts'
import { launchBrowser, startSystem } from './system.ts'

/** Runs `atrium …` as an operator would, against the running system's gateway database. */
async function atrium(gatewayDb: string, command: string) {
  const args = command.replace(/^npx atrium /, '').split(' ')
  let err = ''
  const code = await runCli(
    args,
    { GatewayDB: gatewayDb, ServiceSecret: SERVICE_SECRET },
    { out: () => {}, err: (text) => (err += text) },
  )
  assert.equal(code, 0, err)
}

/** An MCP client of the official SDK, connected as the page's instructions say. */
async function connectAssistant(endpoint: string, authorization: string) {
  const client = new Client({ name: 'assistant-e2e', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(endpoint), {
      requestInit: { headers: { Authorization: authorization } },
    }),
  )
  return client
}

const shownTools = (page: Page) => page.locator('.assistant-tools li').allInnerTexts()

test('a person connects an AI assistant from the account page, and revoking its key shuts it out', async (t) => {
  const browser = await launchBrowser(t)
  if (!browser) return
  const gatewayDb = await createTestDatabaseUrl(t, 'sqlite')
  const system = await startSystem(t, 'sqlite', { GatewayDB: gatewayDb })
  const eve = await signedInPerson(browser, system, 'eve@example.com', 'Eve')
  const dana = await signedInPerson(browser, system, 'dana@example.com', 'Dana')
  await dana.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: system.url })
  const chatId = await openPrivateChat(dana.page, 'eve@example.com')

  await dana.page.getByText('Profile', { exact: true }).click()
  await dana.page.getByRole('link', { name: 'Account and security' }).click()
  const section = dana.page.locator('section.assistants')
  await section.getByRole('heading', { name: 'AI assistants' }).waitFor()
  // No grants yet: the page names the operator's command, which this test runs as the operator.
  await section.getByText('An operator has not allowed any tools for you yet.').waitFor()
  const asked = (await section.locator('.assistant-empty code').textContent()) ?? ''
  assert.match(asked, new RegExp(`^npx atrium mcp allow --user ${dana.crmId} --tool \\S+$`))
  await section.getByText('No keys yet.').waitFor()
  await section.evaluate((element) => element.scrollIntoView({ block: 'start' }))
  await checkAccessibility(dana.page, 'account-assistants-empty')
  await atrium(gatewayDb, asked)
  await atrium(
    gatewayDb,
    `mcp allow --user ${dana.crmId} --tool wallet_send --currency USD --per-call 50 --per-day 200`,
  )

  await dana.page.reload()
  await section.locator('.assistant-tools li').nth(3).waitFor()
  assert.deepEqual(await shownTools(dana.page), [
    'Read your wallet balance',
    'Send money — up to 50.00 USD per call, 200.00 per day, nothing spent today',
    'Read the messages in your chats',
    'Send messages in your chats, as you',
  ])

  await section.getByLabel('Name for a new key').fill('Claude on my laptop')
  await section.getByRole('button', { name: 'Create key' }).click()
  await section.getByRole('heading', { name: 'Connect an assistant with “Claude on my laptop”' }).waitFor()
  const key = await section.getByLabel('Key', { exact: true }).inputValue()
  assert.match(key, /^atr_[A-Za-z0-9]+_\S+$/)
  await section.getByRole('button', { name: 'Copy key' }).click()
  await section.getByRole('status').filter({ hasText: 'Key copied.' }).waitFor()
  assert.equal(await dana.page.evaluate(() => navigator.clipboard.readText()), key)
  const row = section.locator('.assistant-keys li', { hasText: 'Claude on my laptop' })
  assert.match((await row.textContent()) ?? '', new RegExp(`${key.split('_').slice(0, 2).join('_')}_…`))
  assert.match((await row.textContent()) ?? '', /not used yet/)

  const command = (await section.locator('.new-key .setup-text').first().textContent()) ?? ''
  const parsed = /^claude mcp add --transport http atrium (\S+) --header "Authorization: (Bearer (\S+))"$/.exec(command)
  assert.ok(parsed, command)
  const [, endpoint, authorization, shownKey] = parsed
  assert.equal(endpoint, `${system.url}/auth/v1/mcp`)
  assert.equal(shownKey, key)
  const vsCode = JSON.parse((await section.locator('.new-key .setup-text').nth(1).textContent()) ?? '')
  assert.equal(vsCode.servers.atrium.url, endpoint)
  await section.evaluate((element) => element.scrollIntoView({ block: 'start' }))
  await checkAccessibility(dana.page, 'account-assistants')
  await dana.page.setViewportSize({ width: 390, height: 780 })
  await section.locator('.new-key').evaluate((element) => element.scrollIntoView({ block: 'start' }))
  await checkAccessibility(dana.page, 'account-assistants-phone')
  await dana.page.setViewportSize({ width: 1100, height: 760 })

  // The assistant, set up exactly as the page said: it sees the granted tools and writes to Eve as Dana.
  const assistant = await connectAssistant(endpoint!, authorization!)
  t.after(() => assistant.close())
  const { tools } = await assistant.listTools()
  assert.deepEqual(tools.map((tool) => tool.name).sort(), [
    'chat_messages',
    'chat_send',
    'wallet_balance',
    'wallet_send',
  ])
  const text = 'Hello Eve, this is Dana’s assistant.'
  const sent = (await assistant.callTool({ name: 'chat_send', arguments: { chat_id: chatId, content: text } })) as {
    isError?: boolean
    structuredContent?: { message: { chat_id: string; owner: string } }
  }
  assert.equal(sent.isError, undefined, JSON.stringify(sent))
  assert.equal(sent.structuredContent?.message.chat_id, chatId)
  assert.equal(sent.structuredContent?.message.owner, dana.crmId)
  await eve.page.getByText(text).first().waitFor()

  // Shown once: after a reload the key is gone from the page, and the row says it was used.
  await dana.page.reload()
  await row.filter({ hasText: 'last used' }).waitFor()
  assert.equal(await section.locator('.new-key').count(), 0)
  assert.equal(await dana.page.getByText(key).count(), 0)

  await row.getByRole('button', { name: 'Revoke Claude on my laptop' }).click()
  await row.getByRole('button', { name: 'Yes, revoke' }).click()
  await section.getByRole('status').filter({ hasText: 'Claude on my laptop revoked.' }).waitFor()
  assert.equal(await section.locator('.assistant-keys li').count(), 0)
  await assert.rejects(assistant.listTools(), (error: { code?: number }) => error.code === 401)
  await assert.rejects(connectAssistant(endpoint!, authorization!), (error: { code?: number }) => error.code === 401)
  assert.deepEqual(dana.errors, [])
})
