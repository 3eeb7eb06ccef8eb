import { createHmac, timingSafeEqual } from 'node:crypto'

/** Header of a finished upload's answer that carries its file token (docs/files.md). */
export const FILE_TOKEN_HEADER = 'x-file-token'

/**
 * What the gateway vouches for about a finished upload, so that the chat module can attach it to
 * a message without asking back: its id, its uploader and what was declared at creation.
 */
export interface FileClaim {
  /** The upload's id, which is the file's id in downloads. */
  id: number
  /** CRM id of the uploader; only they may attach it. */
  owner: number
  name: string
  size: number
  /** Content type the uploader declared ('' when none). */
  type: string
  /** Milliseconds since the epoch after which the token no longer attaches anything. */
  expires: number
}

// Its own context line, so a file token can never pass as any other signature made with the secret.
const CONTEXT = 'atrium file token v1\n'

function mac(secret: string, payload: string): Buffer {
  return createHmac('sha256', secret).update(CONTEXT).update(payload).digest()
}

/** Signs a claim with the inter-service secret: `<base64url JSON>.<base64url HMAC-SHA256>`. */
export function signFileToken(secret: string, claim: FileClaim): string {
  const payload = Buffer.from(
    JSON.stringify([claim.id, claim.owner, claim.name, claim.size, claim.type, claim.expires]),
  ).toString('base64url')
  return `${payload}.${mac(secret, payload).toString('base64url')}`
}

const TOKEN = /^([A-Za-z0-9_-]{1,8192})\.([A-Za-z0-9_-]{43})$/

/** Why a token does not attach: forged or damaged, or past its time. */
export type FileTokenProblem = 'invalid' | 'expired'

/**
 * The claim of a token signed with `secret`, or why it is refused. The signature is compared in
 * constant time before the payload is read.
 */
export function verifyFileToken(
  secret: string,
  token: string,
  now = Date.now(),
): { claim: FileClaim } | { problem: FileTokenProblem } {
  const match = TOKEN.exec(token)
  if (!match) return { problem: 'invalid' }
  const given = Buffer.from(match[2]!, 'base64url')
  const expected = mac(secret, match[1]!)
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { problem: 'invalid' }
  let fields: unknown
  try {
    fields = JSON.parse(Buffer.from(match[1]!, 'base64url').toString('utf8'))
  } catch {
    return { problem: 'invalid' }
  }
  if (!Array.isArray(fields) || fields.length !== 6) return { problem: 'invalid' }
  const [id, owner, name, size, type, expires] = fields
  if (
    !Number.isSafeInteger(id) ||
    !Number.isSafeInteger(owner) ||
    typeof name !== 'string' ||
    !Number.isSafeInteger(size) ||
    typeof type !== 'string' ||
    !Number.isSafeInteger(expires)
  ) {
    return { problem: 'invalid' }
  }
  if (expires <= now) return { problem: 'expired' }
  return { claim: { id, owner, name, size, type, expires } }
}
