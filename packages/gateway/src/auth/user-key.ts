import { createHash, createPublicKey, type KeyObject, verify } from 'node:crypto'

/**
 * The cryptography of UserKey sign-in (docs/gateway.md, "UserKey"): Ed25519 (RFC 8032) public
 * keys, the text a challenge asks the key to sign, and the signature check.
 */

/** The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410), followed by the raw 32-byte key. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')
const RAW_KEY = /^[A-Za-z0-9_-]{43}$/
const SIGNATURE = /^[A-Za-z0-9_-]{86}$/

/**
 * Encodings of the points of small order (libsodium's list): a "key" made of one of them signs
 * nothing anyone should trust, since weak signatures verify under it. Refused at registration.
 */
const SMALL_ORDER = new Set(
  [
    '0100000000000000000000000000000000000000000000000000000000000000',
    'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
    '0000000000000000000000000000000000000000000000000000000000000000',
    '0000000000000000000000000000000000000000000000000000000000000080',
    '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
    'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
    '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
    'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
  ].map((hex) => Buffer.from(hex, 'hex').toString('base64url')),
)

/** The first line of every challenge: the scheme and its version. */
export const CHALLENGE_SCHEME = 'atrium-userkey-v1'

/**
 * The raw key (base64url, 43 characters) of a public key given either that way or as a PEM
 * `PUBLIC KEY` (what `openssl pkey -pubout` and Node's `export({type:'spki',format:'pem'})` write);
 * undefined for anything that is not an Ed25519 public key, and for the points of small order.
 */
export function normalizePublicKey(text: string): string | undefined {
  const raw = rawKey(text.trim())
  return raw && !SMALL_ORDER.has(raw) ? raw : undefined
}

function rawKey(text: string): string | undefined {
  if (RAW_KEY.test(text)) {
    const raw = Buffer.from(text, 'base64url')
    return raw.length === 32 && raw.toString('base64url') === text ? text : undefined
  }
  if (!text.startsWith('-----BEGIN PUBLIC KEY-----')) return undefined
  try {
    const key = createPublicKey({ key: text, format: 'pem' })
    if (key.asymmetricKeyType !== 'ed25519') return undefined
    const der = key.export({ type: 'spki', format: 'der' })
    return der.subarray(SPKI_PREFIX.length).toString('base64url')
  } catch {
    return undefined
  }
}

function keyObject(rawKey: string): KeyObject {
  return createPublicKey({
    key: Buffer.concat([SPKI_PREFIX, Buffer.from(rawKey, 'base64url')]),
    format: 'der',
    type: 'spki',
  })
}

/** A short, stable fingerprint to tell keys apart in lists: `SHA256:` and the digest's first 16 bytes. */
export function keyFingerprint(rawKey: string): string {
  return `SHA256:${createHash('sha256').update(Buffer.from(rawKey, 'base64url')).digest('base64url').slice(0, 22)}`
}

/** The exact text a key signs (UTF-8, no trailing newline): bound to this gateway's origin and one challenge. */
export function challengeText(input: { origin: string; challengeId: number; nonce: string; expires: number }): string {
  return [
    CHALLENGE_SCHEME,
    `origin=${input.origin}`,
    `challenge=${input.challengeId}`,
    `nonce=${input.nonce}`,
    `expires=${input.expires}`,
  ].join('\n')
}

/** The parts of a challenge text this gateway issued for `origin`, or undefined when it is not one. */
export function parseChallengeText(text: string, origin: string) {
  const match =
    /^atrium-userkey-v1\norigin=([^\n]+)\nchallenge=([1-9][0-9]{0,15})\nnonce=([A-Za-z0-9_-]{43})\nexpires=([0-9]{1,16})$/.exec(
      text,
    )
  if (!match || match[1] !== origin) return undefined
  return { challengeId: Number(match[2]), nonce: match[3]!, expires: Number(match[4]) }
}

/** True when `signature` (base64url, 64 bytes) is the key's Ed25519 signature of `text`. */
export function signatureMatches(rawKey: string, text: string, signature: string): boolean {
  if (!SIGNATURE.test(signature)) return false
  const bytes = Buffer.from(signature, 'base64url')
  if (bytes.length !== 64) return false
  return verify(null, Buffer.from(text, 'utf8'), keyObject(rawKey), bytes)
}
