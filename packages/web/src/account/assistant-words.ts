import type { SendLimitView, ToolAccessView } from '../api/auth-api.ts'

/** What each MCP tool lets an assistant do, in the words of the person whose account it is. */
const TOOL_WORDS: Record<string, string> = {
  wallet_balance: 'Read your wallet balance',
  wallet_transactions: 'Read your wallet transactions',
  wallet_send: 'Send money',
  chat_messages: 'Read the messages in your chats',
  chat_send: 'Send messages in your chats, as you',
  user_info: 'Look up profiles: names and contacts',
}

/** The tools an operator is asked to allow when there are none: reading first, nothing that moves money. */
export const SUGGESTED_TOOLS = ['wallet_balance', 'chat_messages', 'chat_send']

/** An amount as money is written: 50.00. */
export function amountText(amount: number): string {
  return amount.toFixed(2)
}

/** One wallet_send grant in words: "up to 50.00 USD per call, 200.00 per day, 20.00 spent today". */
export function sendLimitWords(limit: SendLimitView): string {
  const any = limit.currency === ''
  const currency = any ? '' : ` ${limit.currency}`
  const parts: string[] = []
  if (limit.perCall > 0) parts.push(`up to ${amountText(limit.perCall)}${currency} per call`)
  if (limit.perDay > 0) {
    const perDay = `${amountText(limit.perDay)}${parts.length > 0 ? '' : currency} per day${any ? ' in each currency' : ''}`
    parts.push(parts.length > 0 ? perDay : `up to ${perDay}`)
    const spent = limit.spentToday.filter((entry) => entry.amount > 0)
    if (spent.length === 0) parts.push('nothing spent today')
    else if (any)
      parts.push(`${spent.map((entry) => `${amountText(entry.amount)} ${entry.currency}`).join(', ')} spent today`)
    else parts.push(`${amountText(spent[0]!.amount)} spent today`)
  }
  const scope = any ? 'in any currency' : `in ${limit.currency}`
  return parts.length === 0 ? `${scope}, with no limit` : `${any ? `${scope}: ` : ''}${parts.join(', ')}`
}

/** A tool in words; wallet_send once per grant, each with its limits. */
export function toolWords(tool: ToolAccessView): string[] {
  const words = TOOL_WORDS[tool.name] ?? tool.title
  if (tool.sends.length === 0) return [words]
  return tool.sends.map((limit) => `${words} — ${sendLimitWords(limit)}`)
}

/** What to give an assistant: the command for Claude Code and VS Code's `.vscode/mcp.json`. */
export function assistantSetup(endpoint: string, key: string) {
  const claudeCode = `claude mcp add --transport http atrium ${endpoint} --header "Authorization: Bearer ${key}"`
  const vsCode = JSON.stringify(
    {
      inputs: [{ type: 'promptString', id: 'atrium-key', description: 'Atrium API key', password: true }],
      servers: {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code's own input variable, not a template.
        atrium: { type: 'http', url: endpoint, headers: { Authorization: 'Bearer ${input:atrium-key}' } },
      },
    },
    null,
    2,
  )
  return { claudeCode, vsCode }
}
