/**
 * Sign-in throughput (issue 17): `npm exec -- node bench/sign-in.ts [--seconds 5] [--connections 8]`.
 * A gateway process (bench/sign-in-gateway.ts, SQLite, logs off, rate limits out of reach) serves
 * three kinds of complete sign-ins, each ending in a new session and its login audit row:
 * - OTP: `POST /auth/v1/email/verify` with a code (the challenges are made before the run with the
 *   gateway's own challenge store, as `email/start` makes them, so the mail is not measured);
 * - passkey: `passkeys/authenticate/options`, then `passkeys/authenticate/verify` with an ES256
 *   assertion made here by a software authenticator (P-256 keys registered before the run);
 * - UserKey: `userkey/challenge`, then `userkey/verify` with an Ed25519 signature.
 * Sign-ins per second per core = completed sign-ins / the gateway process's CPU seconds (user +
 * system, from /proc) over the run. Target: at least 10× Keycloak's sizing figure of 15
 * password-based logins per second per vCPU, i.e. 150 per core.
 */
import { spawn } from 'node:child_process'
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { SignInSpec } from './sign-in-gateway.ts'

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '5' }, connections: { type: 'string', default: '8' } },
})
const SECONDS = Number(values.seconds)
const CONNECTIONS = Number(values.connections)
const KEYCLOAK_PER_VCPU = 15
const TARGET = 10 * KEYCLOAK_PER_VCPU
const ORIGIN = 'http://127.0.0.1:8080'
const KEYS = CONNECTIONS * 4

const b64url = (bytes: Buffer | Uint8Array) => Buffer.from(bytes).toString('base64url')
const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest()

/** A P-256 key as a COSE_Key (EC2, ES256), the CBOR map authenticators hand over at registration. */
function coseKey(publicKey: KeyObject): string {
  const jwk = publicKey.export({ format: 'jwk' })
  const x = Buffer.from(jwk.x!, 'base64url')
  const y = Buffer.from(jwk.y!, 'base64url')
  const cbor = Buffer.concat([
    Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]),
    x,
    Buffer.from([0x22, 0x58, 0x20]),
    y,
  ])
  return b64url(cbor)
}

const ed25519 = Array.from({ length: KEYS }, () => generateKeyPairSync('ed25519'))
const p256 = Array.from({ length: KEYS }, () => ({
  ...generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  credentialId: b64url(randomBytes(16)),
  counter: 0,
}))
const otpChallenges = Math.min(20_000, Math.max(2_000, SECONDS * 2_000))

const dir = mkdtempSync(join(tmpdir(), 'atrium-bench-sign-in-'))
const spec: SignInSpec = {
  database: `sqlite:${join(dir, 'gateway.db')}`,
  publicOrigin: ORIGIN,
  otpChallenges,
  userKeys: ed25519.map(({ publicKey }) => publicKey.export({ format: 'jwk' }).x!),
  passkeys: p256.map(({ credentialId, publicKey }) => ({ credentialId, coseKey: coseKey(publicKey) })),
}
writeFileSync(join(dir, 'spec.json'), JSON.stringify(spec))
const readyPath = join(dir, 'ready.json')
const child = spawn(
  process.execPath,
  [new URL('./sign-in-gateway.ts', import.meta.url).pathname, join(dir, 'spec.json'), readyPath],
  {
    stdio: 'inherit',
  },
)
try {
  const setUpStart = Date.now()
  while (!existsSync(readyPath)) {
    if (child.exitCode !== null) throw new Error('the gateway process ended')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const ready = JSON.parse(readFileSync(readyPath, 'utf8')) as {
    port: number
    pid: number
    codes: { challengeId: string; code: string }[]
  }
  console.log(
    `set up ${otpChallenges} OTP challenges and ${KEYS * 2} keys in ${((Date.now() - setUpStart) / 1000).toFixed(1)} s`,
  )
  const base = `http://127.0.0.1:${ready.port}`

  async function post(path: string, body: object): Promise<{ status: number; result: Record<string, string> }> {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    const answer = (await response.json()) as { result: Record<string, string> }
    return { status: response.status, result: answer.result }
  }

  /** The gateway's CPU seconds so far (user + system). */
  function cpuSeconds(): number {
    const fields = readFileSync(`/proc/${ready.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  }

  const otp = ready.codes.values()
  const methods: Record<string, (loop: number, round: number) => Promise<number>> = {
    otp: async () => {
      const next = otp.next()
      if (next.done) throw new Error('out of OTP challenges: lower --seconds')
      return (await post('/auth/v1/email/verify', next.value)).status
    },
    passkey: async (loop, round) => {
      const key = p256[loop + CONNECTIONS * (round % 4)]!
      const { result } = await post('/auth/v1/passkeys/authenticate/options', {})
      const options = result.options as unknown as { challenge: string }
      key.counter += 1
      const authenticatorData = Buffer.alloc(37)
      sha256('127.0.0.1').copy(authenticatorData, 0)
      authenticatorData[32] = 0x05 // user present, user verified
      authenticatorData.writeUInt32BE(key.counter, 33)
      const clientDataJSON = Buffer.from(
        JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin: ORIGIN, crossOrigin: false }),
      )
      const signature = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), key.privateKey)
      const response = {
        id: key.credentialId,
        rawId: key.credentialId,
        type: 'public-key',
        response: {
          authenticatorData: b64url(authenticatorData),
          clientDataJSON: b64url(clientDataJSON),
          signature: b64url(signature),
        },
        clientExtensionResults: {},
      }
      return (await post('/auth/v1/passkeys/authenticate/verify', { challengeId: result.challengeId, response })).status
    },
    userkey: async (loop, round) => {
      const key = ed25519[loop + CONNECTIONS * (round % 4)]!
      const publicKey = key.publicKey.export({ format: 'jwk' }).x!
      const { result } = await post('/auth/v1/userkey/challenge', { publicKey })
      const signature = b64url(sign(null, Buffer.from(result.challenge!, 'utf8'), key.privateKey))
      return (await post('/auth/v1/userkey/verify', { challenge: result.challenge, signature })).status
    },
  }

  console.log(
    `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}; ${CONNECTIONS} connections, ${SECONDS} s each`,
  )
  for (const [name, signIn] of Object.entries(methods)) {
    // Warm-up: the JIT and the database's caches, not counted.
    for (let i = 0; i < CONNECTIONS; i++) await signIn(i, 0)
    let completed = 0
    let failed = 0
    const cpuBefore = cpuSeconds()
    const started = performance.now()
    const deadline = started + SECONDS * 1000
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, loop) => {
        for (let round = 1; performance.now() < deadline; round++) {
          if ((await signIn(loop, round)) === 200) completed++
          else failed++
        }
      }),
    )
    const wall = (performance.now() - started) / 1000
    const cpu = cpuSeconds() - cpuBefore
    const perCore = completed / cpu
    console.log(
      `${name.padEnd(8)} ${completed} sign-ins (${failed} failed) in ${wall.toFixed(1)} s: ` +
        `${(completed / wall).toFixed(0)}/s wall, gateway CPU ${cpu.toFixed(2)} s, ` +
        `${perCore.toFixed(0)} per core-second = ${(perCore / KEYCLOAK_PER_VCPU).toFixed(1)}× Keycloak's ${KEYCLOAK_PER_VCPU}/vCPU; ` +
        `target ${TARGET} ${perCore >= TARGET ? 'met' : 'NOT met'}`,
    )
  }
} finally {
  if (child.exitCode === null) {
    child.kill('SIGTERM')
    await new Promise((resolve) => child.once('exit', resolve))
  }
  rmSync(dir, { recursive: true, force: true })
}
