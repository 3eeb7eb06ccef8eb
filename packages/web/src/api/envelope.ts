import { type ErrorName, errorCodes } from '@atrium/platform/errors'
import { wordsFor } from './failure-words.ts'

/** How a request failed: an error code's name from the server, or a failure before any envelope arrived. */
export type FailureKind = ErrorName | 'Network' | 'BadResponse'

const NAMES_BY_CODE: ReadonlyMap<number, ErrorName> = new Map<number, ErrorName>(
  Object.entries(errorCodes).map(([name, { code }]) => [code, name as ErrorName]),
)

/** The name of an envelope's error code in the platform's table, or undefined for a code it lacks. */
export function errorName(code: number): ErrorName | undefined {
  return NAMES_BY_CODE.get(code)
}

/**
 * A failed request. `code` is the envelope's error code (0 when no envelope arrived) and `kind`
 * its name from the platform's error table, so screens branch on the code, never on the message.
 */
export class RequestError extends Error {
  readonly kind: FailureKind
  readonly code: number
  readonly status: number
  readonly requestId: string
  readonly details: unknown

  constructor(
    kind: FailureKind,
    message: string,
    init: { code?: number; status?: number; requestId?: string; details?: unknown } = {},
  ) {
    super(message)
    this.name = 'RequestError'
    this.kind = kind
    this.code = init.code ?? 0
    this.status = init.status ?? 0
    this.requestId = init.requestId ?? ''
    this.details = init.details
  }
}

interface Envelope {
  result?: unknown
  error?: { code?: unknown; message?: unknown; details?: unknown }
  id?: unknown
}

function isEnvelope(value: unknown): value is Envelope {
  return typeof value === 'object' && value !== null && ('result' in value || 'error' in value)
}

/** The `result` of an envelope response; throws RequestError for an error envelope or anything else. */
export async function readEnvelope<T>(response: Response): Promise<T> {
  const text = await response.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new RequestError('BadResponse', `The server answered ${response.status} without a JSON envelope.`, {
      status: response.status,
    })
  }
  if (!isEnvelope(body)) {
    throw new RequestError('BadResponse', `The server answered ${response.status} without an envelope.`, {
      status: response.status,
    })
  }
  const requestId = typeof body.id === 'string' ? body.id : ''
  if (body.error) {
    const code = typeof body.error.code === 'number' ? body.error.code : 0
    const message = typeof body.error.message === 'string' ? body.error.message : `Request failed (${response.status}).`
    const kind: FailureKind = errorName(code) ?? 'BadResponse'
    throw new RequestError(kind, message, { code, status: response.status, requestId, details: body.error.details })
  }
  if (!response.ok) {
    throw new RequestError('BadResponse', `The server answered ${response.status} without an error.`, {
      status: response.status,
      requestId,
    })
  }
  return body.result as T
}

/** True when `error` is a RequestError of one of the given kinds. */
export function isFailure(error: unknown, ...kinds: FailureKind[]): error is RequestError {
  return error instanceof RequestError && (kinds.length === 0 || kinds.includes(error.kind))
}

/**
 * A failure in words for the person using the client (failure-words.ts), never the server's own
 * message, which is written for developers. `words` replaces the text of some kinds where the
 * screen knows better what went wrong (a sign-in form knows that InvalidRequest means the address).
 */
export function failureText(error: unknown, words: Partial<Record<FailureKind, string>> = {}): string {
  if (error instanceof RequestError) return words[error.kind] ?? wordsFor(error)
  return 'Something went wrong. Try again.'
}
