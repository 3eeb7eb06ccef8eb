import { createHash } from 'node:crypto'
import { ApiError } from '@atrium/platform'
import type { TSchema } from 'typebox'
import type { ModuleAnswer, ModuleCall } from '../proxy/module-call.ts'
import type { McpGrants, Subject } from './grants.repository.ts'
import * as schemas from './tool-schemas.ts'

/** A failure a tool reports to the assistant: an error code from the gateway's table or the module's envelope. */
export class ToolFailure extends Error {
  readonly code: number
  constructor(code: number, message: string) {
    super(message)
    this.code = code
  }

  static from(error: ApiError): ToolFailure {
    return new ToolFailure(error.code, error.message)
  }
}

/** What a tool works with: the caller's module calls, its grant subjects and the whitelist. */
export interface ToolContext {
  crmId: number
  subjects: Subject[]
  grants: McpGrants
  callModule(call: ModuleCall): Promise<ModuleAnswer>
}

export interface McpTool {
  name: string
  title: string
  description: string
  input: TSchema
  output: TSchema
  /** Runs the tool; its structured result, or a ToolFailure / ApiError. */
  invoke(args: Record<string, unknown>, context: ToolContext): Promise<Record<string, unknown>>
}

/** The `result` of a module's envelope; its `error` (or a non-envelope failure) as a ToolFailure. */
function resultOf(answer: ModuleAnswer): Record<string, unknown> {
  const body = answer.body as { result?: unknown; error?: { code?: unknown; message?: unknown } } | undefined
  const error = body?.error
  if (error && typeof error.code === 'number') {
    throw new ToolFailure(error.code, typeof error.message === 'string' ? error.message : 'the module refused the call')
  }
  if (answer.status >= 400 || typeof body?.result !== 'object' || body.result === null) {
    throw ToolFailure.from(
      new ApiError('BadGateway', `the module answered ${answer.status} without an envelope result`),
    )
  }
  return body.result as Record<string, unknown>
}

/** SHA-256 (hex) of a JSON value, keys sorted, for idempotency and the audit. */
export function digestOf(value: unknown): string {
  const canonical = JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  )
  return createHash('sha256')
    .update(canonical ?? '')
    .digest('hex')
}

const walletBalance: McpTool = {
  name: 'wallet_balance',
  title: 'Wallet balance',
  description:
    "Returns the signed-in user's wallet balance in one currency: balance, hold (reserved for pending withdrawals) and available (what can be spent now). A currency never used reads as zeros.",
  input: schemas.walletBalanceInput,
  output: schemas.walletBalanceOutput,
  async invoke(args, { callModule }) {
    return resultOf(
      await callModule({ method: 'GET', path: '/wallet/v1/balance', query: { currency: args.currency as string } }),
    )
  },
}

const walletTransactions: McpTool = {
  name: 'wallet_transactions',
  title: 'Wallet transactions',
  description:
    "Lists the signed-in user's wallet transactions, newest first, optionally in one currency. Amounts are signed from the user's side (negative = money out). Page back by passing the answer's `next` as `before`.",
  input: schemas.walletTransactionsInput,
  output: schemas.walletTransactionsOutput,
  async invoke(args, { callModule }) {
    const query = { currency: args.currency as string, limit: args.limit as number, before: args.before as string }
    return resultOf(await callModule({ method: 'GET', path: '/wallet/v1/transactions', query }))
  },
}

const walletSend: McpTool = {
  name: 'wallet_send',
  title: 'Send money',
  description:
    "Sends money from the signed-in user's wallet to another user at once (not reversible). Always confirm the recipient and amount with the user first. Requires a fresh `idempotency_key` per transfer: retrying a call with the same key and arguments never sends twice. The operator may cap amounts per call and per UTC day.",
  input: schemas.walletSendInput,
  output: schemas.walletSendOutput,
  async invoke(input, { crmId, subjects, grants, callModule }) {
    const args = input as schemas.WalletSendArgs
    const send = { to: args.to, currency: args.currency, amount: args.amount, comment: args.comment ?? '' }
    const reservation = {
      crmId,
      idempotencyKey: args.idempotency_key,
      argsDigest: digestOf(send),
      currency: args.currency,
      amount: Math.round(args.amount * 100),
      grants: await grants.sendGrants(subjects, args.currency),
    }
    if (reservation.grants.length === 0) {
      throw new ApiError('McpToolNotAllowed', `wallet_send is not allowed in ${args.currency} for this caller`)
    }
    // Only a user's own wallet sends; the wallet refuses a call without X-Crm anyway, and nothing is counted then.
    if (crmId === 0)
      throw new ApiError('Forbidden', 'wallet_send needs a user: sign in, or use a key that acts as a user')
    const { replay } = await grants.reserveSend(reservation)
    let answer: ModuleAnswer
    try {
      answer = await callModule({
        method: 'POST',
        path: '/wallet/v1/send',
        body: args.comment === undefined ? { to: args.to, currency: args.currency, amount: args.amount } : send,
        headers: { 'idempotency-key': args.idempotency_key },
      })
    } catch (error) {
      // Not routed: nothing went out. A timeout or a broken connection may have moved money: kept.
      if (!replay && error instanceof ApiError && error.name === 'McpModuleNotRouted') {
        await grants.releaseSend(crmId, args.idempotency_key)
      }
      throw error
    }
    // A refusal (4xx) moved nothing: it no longer counts against the day. A replay counted nothing.
    if (!replay && answer.status >= 400 && answer.status < 500) await grants.releaseSend(crmId, args.idempotency_key)
    const result = resultOf(answer)
    return { ...result, replayed: answer.headers['idempotent-replayed'] === 'true' }
  },
}

const chatMessages: McpTool = {
  name: 'chat_messages',
  title: 'Chat messages',
  description:
    'Reads messages of a chat the signed-in user belongs to, newest first (or, with `after`, oldest first from that message). Page back with `before` = the oldest id of the previous page while `has_more` is true.',
  input: schemas.chatMessagesInput,
  output: schemas.chatMessagesOutput,
  async invoke(args, { callModule }) {
    const query = {
      chat_id: args.chat_id as string,
      before: args.before as string,
      after: args.after as string,
      limit: args.limit as number,
    }
    return resultOf(await callModule({ method: 'GET', path: '/msg/v1/get_chat_messages', query }))
  },
}

const chatSend: McpTool = {
  name: 'chat_send',
  title: 'Send a chat message',
  description:
    'Posts a message as the signed-in user in a chat they belong to (Markdown: links, code, lists, quotes; no HTML or images). Other members see it at once.',
  input: schemas.chatSendInput,
  output: schemas.chatSendOutput,
  async invoke(args, { callModule }) {
    const body: Record<string, unknown> = { chat_id: args.chat_id, content: args.content }
    if (args.reply_to !== undefined) body.reply_to = args.reply_to
    return { message: resultOf(await callModule({ method: 'POST', path: '/msg/v1/send_message', body })) }
  },
}

const userInfo: McpTool = {
  name: 'user_info',
  title: 'User profile',
  description:
    "Returns a user's profile from the CRM: name, contacts (email, phone, telegram, each marked verified or not) and registration time. Without `crm_id`, the signed-in user's own; another user's profile comes without contacts (they are private).",
  input: schemas.userInfoInput,
  output: schemas.userInfoOutput,
  async invoke(args, { callModule }) {
    return resultOf(
      await callModule({ method: 'GET', path: '/crm/v1/user_info', query: { crm_id: args.crm_id as string } }),
    )
  },
}

/** Every tool of the MCP endpoint, in the order tools/list shows them. */
export const TOOLS: readonly McpTool[] = [
  walletBalance,
  walletTransactions,
  walletSend,
  chatMessages,
  chatSend,
  userInfo,
]

export const TOOL_NAMES: readonly string[] = TOOLS.map((tool) => tool.name)
