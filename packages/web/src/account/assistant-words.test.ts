import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { SendLimitView, ToolAccessView } from '../api/auth-api.ts'
import { assistantSetup, sendLimitWords, toolWords } from './assistant-words.ts'

const limit = (changes: Partial<SendLimitView>): SendLimitView => ({
  grantedTo: 'user',
  currency: 'USD',
  perCall: 0,
  perDay: 0,
  spentToday: [],
  ...changes,
})

test('a wallet_send grant reads as its limits and what was spent today', () => {
  const tool: ToolAccessView = {
    name: 'wallet_send',
    title: 'Send money',
    grantedTo: ['user'],
    sends: [limit({ perCall: 50, perDay: 200, spentToday: [{ currency: 'USD', amount: 20 }] })],
  }
  assert.deepEqual(toolWords(tool), ['Send money — up to 50.00 USD per call, 200.00 per day, 20.00 spent today'])
  assert.equal(sendLimitWords(limit({ perDay: 30 })), 'up to 30.00 USD per day, nothing spent today')
  assert.equal(sendLimitWords(limit({ perCall: 5 })), 'up to 5.00 USD per call')
  assert.equal(sendLimitWords(limit({})), 'in USD, with no limit')
  assert.equal(sendLimitWords(limit({ currency: '' })), 'in any currency, with no limit')
  assert.equal(
    sendLimitWords(
      limit({
        currency: '',
        perCall: 10,
        perDay: 25,
        spentToday: [
          { currency: 'EUR', amount: 3.5 },
          { currency: 'USD', amount: 12.25 },
        ],
      }),
    ),
    'in any currency: up to 10.00 per call, 25.00 per day in each currency, 3.50 EUR, 12.25 USD spent today',
  )
})

test('tools read as what they let an assistant do, an unknown one by its title', () => {
  const tool = (name: string, title = name): ToolAccessView => ({ name, title, grantedTo: ['user'], sends: [] })
  assert.deepEqual(toolWords(tool('wallet_balance')), ['Read your wallet balance'])
  assert.deepEqual(toolWords(tool('chat_send')), ['Send messages in your chats, as you'])
  assert.deepEqual(toolWords(tool('calendar_read', 'Calendar')), ['Calendar'])
})

test('the setup commands carry the endpoint and, for Claude Code, the key', () => {
  const endpoint = 'https://example.com/auth/v1/mcp'
  const { claudeCode, vsCode } = assistantSetup(endpoint, 'atr_abc_def')
  assert.equal(
    claudeCode,
    'claude mcp add --transport http atrium https://example.com/auth/v1/mcp --header "Authorization: Bearer atr_abc_def"',
  )
  const settings = JSON.parse(vsCode)
  assert.equal(settings.servers.atrium.url, endpoint)
  assert.equal(settings.servers.atrium.type, 'http')
  assert.equal(settings.servers.atrium.headers.Authorization, `Bearer \${input:${settings.inputs[0].id}}`)
  assert.equal(settings.inputs[0].password, true)
})
