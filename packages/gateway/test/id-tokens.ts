import { createHmac, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto'

/** The header and payload of a compact JWS, decoded. */
export function decodeJws(jws: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header = '', payload = ''] = jws.split('.')
  return {
    header: JSON.parse(Buffer.from(header, 'base64url').toString()),
    payload: JSON.parse(Buffer.from(payload, 'base64url').toString()),
  }
}

function encoded(part: object): string {
  return Buffer.from(JSON.stringify(part)).toString('base64url')
}

/** A JWS of `payload` under `header`, signed with RS256, RS384 or RS512 by `key`, with HS256 by a secret, or unsigned. */
export function signJws(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  key?: KeyObject | string,
): string {
  const input = `${encoded(header)}.${encoded(payload)}`
  let signature = ''
  const rsa = /^RS(256|384|512)$/.exec(String(header.alg))
  if (rsa && typeof key === 'object') {
    signature = sign(`sha${rsa[1]}`, Buffer.from(input), key).toString('base64url')
  } else if (header.alg === 'HS256' && typeof key === 'string') {
    signature = createHmac('sha256', key).update(input).digest('base64url')
  } else if (header.alg !== 'none') {
    throw new Error(`signJws cannot sign ${String(header.alg)}`)
  }
  return `${input}.${signature}`
}

/** A fresh RSA signing key with a kid of its own, and its public JWK as a provider would publish it. */
export function newSigningKey(kid = `key-${randomBytes(4).toString('hex')}`) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return { kid, privateKey, publicJwk: { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig' } as JsonWebKey }
}
