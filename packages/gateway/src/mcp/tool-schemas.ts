import { type Static, Type } from 'typebox'

/** Text without C0 control characters other than tab, line feed and carriage return (PostgreSQL refuses NUL). */
export const CONTROL_FREE = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]*$'

const id = (description: string) => Type.String({ pattern: '^[1-9][0-9]{0,15}$', description })
const currency = Type.String({
  pattern: '^[A-Z][A-Z0-9]{2,9}$',
  description: 'Currency code, 3 to 10 upper-case letters or digits starting with a letter, e.g. `USD`.',
})

// Module views: their fields as documented (docs/wallet.md, docs/chat-api.md); fields a module
// adds later pass, so a newer module does not break the tool.
const balance = Type.Object(
  {
    currency: Type.String(),
    balance: Type.Number({ description: 'Funds in the wallet.' }),
    hold: Type.Number({ description: 'Part of the balance held for pending withdrawals.' }),
    available: Type.Number({ description: 'balance − hold: what can be sent now.' }),
  },
  { description: "The caller's wallet in one currency." },
)

const transaction = Type.Object(
  {
    id: Type.String({ description: 'Transaction id.' }),
    currency: Type.String(),
    tx_type: Type.Integer({ description: '1 deposit, 2 transfer, 3 withdrawal.' }),
    state: Type.Integer({ description: '1 pending, 2 completed, 3 failed.' }),
    amount: Type.Number({ description: "Signed from the caller's side: negative when funds leave the wallet." }),
    fee: Type.Number({ description: 'What the caller pays on top of the amount.' }),
    datetime: Type.String({ description: 'Creation time, ISO 8601 UTC.' }),
    comment: Type.String(),
    partner: Type.Optional(
      Type.Object({
        crm_id: Type.String({ description: 'The other user of a transfer; "0" for an external party.' }),
        name: Type.String({ description: 'The external party of a deposit or withdrawal.' }),
      }),
    ),
  },
  { description: 'A transaction as the caller sees it.' },
)

const message = Type.Object(
  {
    id: Type.String({ description: 'Message id.' }),
    chat_id: Type.String(),
    owner: Type.String({ description: 'CRM id of the author.' }),
    content: Type.String({ description: 'Markdown text (a widget message: its JSON).' }),
    time: Type.String({ description: 'Sending time, ISO 8601 UTC.' }),
    edited: Type.Boolean(),
  },
  { description: 'A chat message (the chat module’s MessageView).' },
)

export const walletBalanceInput = Type.Object({ currency }, { additionalProperties: false })
export const walletBalanceOutput = balance

export const walletTransactionsInput = Type.Object(
  {
    currency: Type.Optional(currency),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Page size, 1–100 (default 20).' })),
    before: Type.Optional(id('Cursor: the `next` of the previous page, for older transactions.')),
  },
  { additionalProperties: false },
)
export const walletTransactionsOutput = Type.Object({
  transactions: Type.Array(transaction, { description: 'Newest first.' }),
  next: Type.String({ description: 'Pass as `before` for the next (older) page; empty on the last page.' }),
})

export const walletSendInput = Type.Object(
  {
    to: id('CRM id of the recipient (a string of digits).'),
    currency,
    amount: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1e13,
      description: 'Amount to send, positive, at most two decimal places. A fee may be charged on top.',
    }),
    comment: Type.Optional(
      Type.String({
        maxLength: 500,
        pattern: CONTROL_FREE,
        description: 'Note shown to both parties (≤ 500 characters).',
      }),
    ),
    idempotency_key: Type.String({
      pattern: '^[A-Za-z0-9_.:-]{1,64}$',
      description:
        'A new unique key (1–64 of A–Z a–z 0–9 _ . : -) for each distinct transfer. Retrying with the same key and arguments never sends twice; reusing it with other arguments is refused.',
    }),
  },
  { additionalProperties: false },
)
export const walletSendOutput = Type.Object({
  transaction,
  balance,
  replayed: Type.Boolean({ description: 'True when this answers an earlier call with the same idempotency key.' }),
})

export const chatMessagesInput = Type.Object(
  {
    chat_id: id('The chat to read.'),
    before: Type.Optional(id('Only messages older than this message id (newest first).')),
    after: Type.Optional(id('Only messages newer than this message id (oldest first).')),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: 'Page size, 1–200 (default 50).' })),
  },
  { additionalProperties: false },
)
export const chatMessagesOutput = Type.Object({
  messages: Type.Array(message),
  has_more: Type.Boolean({ description: 'More messages in the same direction.' }),
})

export const chatSendInput = Type.Object(
  {
    chat_id: id('The chat to post in; the caller must be a member allowed to post.'),
    content: Type.String({
      minLength: 1,
      maxLength: 16_384,
      pattern: CONTROL_FREE,
      description: 'Message text, Markdown (links, code, lists, quotes), 1–16384 characters.',
    }),
    reply_to: Type.Optional(id('A message of the same chat this one replies to.')),
  },
  { additionalProperties: false },
)
export const chatSendOutput = Type.Object({ message })

export const userInfoInput = Type.Object(
  { crm_id: Type.Optional(id('The user to look up; the caller when omitted.')) },
  { additionalProperties: false },
)
export const userInfoOutput = Type.Object({
  crm_id: Type.String(),
  name: Type.String(),
  contacts: Type.Array(
    Type.Object({
      kind: Type.Union([Type.Literal('email'), Type.Literal('phone'), Type.Literal('telegram')]),
      value: Type.String(),
      verified: Type.Boolean(),
    }),
    { description: "The user's own contacts; empty for another user (contacts are private)." },
  ),
  created: Type.String({ description: 'Registration time, ISO 8601 UTC.' }),
})

export type WalletSendArgs = Static<typeof walletSendInput>
