/**
 * The gateway process of bench/sign-in.ts: `node bench/sign-in-gateway.ts <spec.json> <ready.json>`.
 * Builds a gateway on a fresh SQLite file, registers the benchmark's keys (the spec's Ed25519 raw
 * keys for UserKey, P-256 COSE keys for passkeys) and makes email sign-in challenges with the
 * gateway's own challenge store, then listens and writes what the client needs (port, pid,
 * challenge ids and codes, credential ids) to the ready file.
 */
import { readFileSync } from 'node:fs'
import { ContactFlags } from '@atrium/platform'
import { createChallenges } from '../packages/gateway/src/auth/challenges.repository.ts'
import { ContactKind } from '../packages/gateway/src/users/users.repository.ts'
import { buildBenchGateway, listenOnLoopback } from './bench-gateway.ts'
import { stopWithParent, writeFileAtomically } from './child-process.ts'

export interface SignInSpec {
  database: string
  publicOrigin: string
  otpChallenges: number
  userKeys: string[]
  passkeys: { credentialId: string; coseKey: string }[]
}

const [specPath, readyPath] = process.argv.slice(2)
const spec = JSON.parse(readFileSync(specPath!, 'utf8')) as SignInSpec
const { app, config } = await buildBenchGateway({
  GatewayDB: spec.database,
  ServiceSecret: 'bench-service-secret-0123456789abcdef',
  PublicOrigin: spec.publicOrigin,
  Otp: { MaxChallengesPerTargetPerHour: 100, MaxCodesPerClientPerHour: 0, MaxCodesPerHour: 0 },
  Sessions: { MaxPerUser: 10 },
})
const { store } = app

const challenges = createChallenges(store.db, store.nextTick, config.Otp, {
  codeKey: config.ServiceSecret,
  now: store.now,
})
const codes: { challengeId: string; code: string }[] = []
for (let i = 0; i < spec.otpChallenges; i++) {
  // A successful sign-in ends the address's other codes, so each challenge has an address of its
  // own, of a user who exists already (a returning user, as Keycloak's figure counts logins).
  const target = `bench-${i}@example.com`
  const user = await store.users.create({ name: `otp user ${i}` })
  await store.users.addContact(user.crm_id, ContactKind.Email, target, ContactFlags.Verified)
  const started = await challenges.create({
    kind: 'email_otp',
    target,
    client: `bench-${i}`,
    returnTo: '/',
    deviceGuid: '',
  })
  if ('retryAfterSeconds' in started) throw new Error(`challenge ${i} refused: ${started.scope}`)
  codes.push({ challengeId: String(started.challenge.id), code: started.code })
}
for (const [index, publicKey] of spec.userKeys.entries()) {
  const user = await store.users.create({ name: `key user ${index}` })
  await store.userKeys.add({ crmId: user.crm_id, name: 'bench', publicKey })
}
for (const [index, { credentialId, coseKey }] of spec.passkeys.entries()) {
  const user = await store.users.create({ name: `passkey user ${index}` })
  await store.passkeys.add({
    crm_id: user.crm_id,
    credential_id: credentialId,
    public_key: coseKey,
    counter: 0,
    transports: 'internal',
    kind: 'passkey',
    device_type: 'singleDevice',
    backed_up: 0,
    name: 'bench',
  })
}

const port = await listenOnLoopback(app)
stopWithParent(() => app.close())
writeFileAtomically(readyPath!, JSON.stringify({ port, pid: process.pid, codes }))
