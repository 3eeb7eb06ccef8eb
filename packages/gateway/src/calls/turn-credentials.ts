import { createHmac } from 'node:crypto'

/**
 * Short-lived TURN credentials by the shared-secret scheme coturn implements (`use-auth-secret`,
 * draft-uberti-behave-turn-rest): the username is `<expiry unix seconds>:<user id>` and the
 * password base64(HMAC-SHA1(secret, username)). The relay recomputes the password from the
 * username and refuses it after the expiry, so nothing is stored and nothing needs revoking.
 */
export function turnCredentials(secret: string, userId: string, expiresAt: number) {
  const username = `${Math.floor(expiresAt / 1000)}:${userId}`
  const credential = createHmac('sha1', secret).update(username).digest('base64')
  return { username, credential }
}
