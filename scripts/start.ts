/**
 * `npm start`: runs the whole system on one machine with the embedded default: the gateway on
 * http://localhost:8080 and the chat, wallet, CRM and payment modules on loopback ports (gateway
 * port + 1, + 2, + 3, + 5), each with its SQLite file under ./data (ATRIUM_PORT and ATRIUM_DATA
 * move both), and the inbound email bridge on 127.0.0.1:2525 (with another ATRIUM_PORT, that
 * port + 4). Ctrl-C, SIGINT, SIGTERM or
 * SIGHUP stops them all gracefully. Further settings come from the file named by ATRIUM_CONFIG
 * (see docs/configuration.md). With ATRIUM_DIST naming a builds directory (`npm run build`), each
 * process with an active build there runs that build, and is restarted gracefully when
 * `atrium release activate` points it at another one (docs/operations.md, "Releases and rollback").
 */
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, realpathSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { currentEntry } from '@atrium/platform/releases'
import { buildClient, clientBuildIsStale } from '../packages/web/build-client.ts'
import { printOutbox } from './outbox-lines.ts'
import { restartOnActivation, type Supervised, supervise, waitHealthy } from './supervisor.ts'

interface ProcessPlan {
  name: string
  entry: string
  health: string
  env: Record<string, string>
}

const root = new URL('../', import.meta.url)
const moduleUrl = (port: number) => `http://127.0.0.1:${port}`

/** Where one `npm start` runs: its data directory and the gateway's port (the modules and the mail bridge take the next five). */
export interface StartSettings {
  dataDir: string
  port: number
  /** A builds directory (ATRIUM_DIST) whose active builds run instead of the checkout's sources. */
  dist?: string
}

/**
 * The data directory (`ATRIUM_DATA`, default `data`) and gateway port (`ATRIUM_PORT`, default
 * 8080) of this run, so that a second system (or a test) can run beside the first.
 */
export function startSettings(env: Record<string, string | undefined>): StartSettings {
  const port = Number(env.ATRIUM_PORT || 8080)
  if (!Number.isInteger(port) || port < 1 || port > 65_530) {
    throw new Error(`ATRIUM_PORT must be a port number from 1 to 65530, got ${JSON.stringify(env.ATRIUM_PORT)}`)
  }
  return { dataDir: env.ATRIUM_DATA || 'data', port, ...(env.ATRIUM_DIST && { dist: resolve(env.ATRIUM_DIST) }) }
}

/**
 * The script a process runs now: its active build under `dist` (resolved through the `current`
 * pointer, so a restart notices a new one), else its source entry in the checkout.
 */
export function entryOf({ entry, name }: ProcessPlan, dist: string | undefined): string {
  const built = dist && currentEntry(dist, name)
  if (built && existsSync(built)) return realpathSync(built)
  return fileURLToPath(new URL(entry, root))
}

/** The processes `npm start` runs, with the environment each gets on top of the caller's. */
export function plan({ dataDir, port }: StartSettings): ProcessPlan[] {
  const modules = { chat: port + 1, wallet: port + 2, crm: port + 3, payment: port + 5 }
  const local = (name: string, entry: string, port: number, database: Record<string, string>): ProcessPlan => ({
    name,
    entry,
    health: `${moduleUrl(port)}/private/v1/health`,
    env: { Host: '127.0.0.1', Port: String(port), ...database },
  })
  return [
    local('chat', 'packages/chat/src/main.ts', modules.chat, {
      ChatDB: `sqlite:${dataDir}/chat.db`,
      Outbox__Path: `${dataDir}/outbox`,
    }),
    local('wallet', 'packages/reference/src/wallet/main.ts', modules.wallet, {
      WalletDB: `sqlite:${dataDir}/wallet.db`,
    }),
    local('crm', 'packages/reference/src/crm/main.ts', modules.crm, { CrmDB: `sqlite:${dataDir}/crm.db` }),
    local('payment', 'packages/reference/src/payment/main.ts', modules.payment, {
      PaymentDB: `sqlite:${dataDir}/payment.db`,
      WalletUrl: moduleUrl(modules.wallet),
    }),
    {
      name: 'gateway',
      entry: 'packages/gateway/src/main.ts',
      health: `http://localhost:${port}/auth/v1/health`,
      env: {
        Host: 'localhost',
        Port: String(port),
        // One gateway process on a developer's machine; production runs one per core (Workers: 0).
        Workers: '1',
        // Links in mail and the sign-in origin check follow the port; 8080 keeps the configured origin.
        ...(port === 8080 ? {} : { PublicOrigin: `http://localhost:${port}` }),
        GatewayDB: `sqlite:${dataDir}/gateway.db`,
        LocalFileStoragePath: `${dataDir}/files`,
        // The inbound email bridge on a high loopback port (docs/delivery.md "Trying it locally").
        MailBridge__Enabled: 'true',
        MailBridge__Host: '127.0.0.1',
        MailBridge__Port: String(port === 8080 ? 2525 : port + 4),
        // The chat API is public behind the gateway: chat answers anonymous callers only for invite guests.
        // The wallet, the CRM and payment have no guests: their routes need a session.
        Proxy__Routes: JSON.stringify([
          { Prefix: '/msg/', Upstream: 'chat', Flags: ['AppAuthAndCORS'] },
          { Prefix: '/wallet/', Upstream: 'wallet', Flags: ['AppAuthAndCORS', 'RequireSession'] },
          { Prefix: '/crm/', Upstream: 'crm', Flags: ['RequireSession'] },
          { Prefix: '/payment/', Upstream: 'payment', Flags: ['RequireSession'] },
          // The chat module's operator pages: the module admits only the admin scope and sends a
          // signed-out visitor to the sign-in page, so the route does not answer 401 itself.
          { Prefix: '/ChatAdmin/', Upstream: 'chat', Flags: [] },
        ]),
        Modules: JSON.stringify(
          Object.fromEntries(Object.entries(modules).map(([name, port]) => [name, moduleUrl(port)])),
        ),
      },
    },
  ]
}

function startProcess(processPlan: ProcessPlan, serviceSecret: string, dist: string | undefined): Supervised {
  return supervise({
    name: processPlan.name,
    entry: () => entryOf(processPlan, dist),
    // Readable logs unless the caller chose a format (LogFormat=json for the JSON lines).
    env: { ServiceSecret: serviceSecret, LogFormat: 'pretty', ...process.env, ...processPlan.env },
    health: processPlan.health,
    log: (line) => console.log(line),
  })
}

/**
 * Builds the chat client the gateway serves at /chat/ when its build is missing or older than its
 * sources; skipped when `Static__Apps` in the environment chooses the frontends instead.
 */
async function ensureClientBuild() {
  if (process.env.Static__Apps !== undefined || !(await clientBuildIsStale())) return
  const started = performance.now()
  const dir = await buildClient()
  console.log(`[web] built the chat client into ${dir} in ${Math.round(performance.now() - started)} ms`)
}

async function main() {
  const settings = startSettings(process.env)
  await ensureClientBuild()
  mkdirSync(settings.dataDir, { recursive: true })
  const plans = plan(settings)
  // Development mail and texts land in the chat module's outbox; each code is printed as it arrives.
  const stopPrinting = printOutbox(join(settings.dataDir, 'outbox'), (line) => console.log(line))
  // The processes of one `npm start` share a fresh inter-service secret unless one is configured.
  const serviceSecret = randomBytes(32).toString('base64url')
  const children = plans.map((processPlan) => startProcess(processPlan, serviceSecret, settings.dist))
  const { dist } = settings
  if (dist) for (const child of children) console.log(`[release] ${child.name} runs ${child.script}`)
  const unwatch = dist ? children.map((child) => restartOnActivation(child, dist, (line) => console.log(line))) : []
  let stopping = false

  function stopAll(signal: NodeJS.Signals) {
    stopping = true
    for (const stop of unwatch) stop()
    for (const child of children) child.stop(signal)
  }
  // Ctrl-C reaches every process of the terminal's group, children included; a signal sent to this
  // process alone (kill, a supervisor, npm forwarding it) must reach them too. A second one kills.
  let signals = 0
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => stopAll(++signals > 1 ? 'SIGKILL' : 'SIGTERM'))
  }

  const exits = children.map(({ name, exited }) =>
    exited.then((code) => {
      if (!stopping) {
        console.error(`[${name}] exited unexpectedly (code ${code}); stopping the others`)
        process.exitCode = 1
        stopAll('SIGTERM')
      }
      return code
    }),
  )

  // Six processes load at once; a busy machine needs more than a quiet one's few seconds.
  const deadline = Date.now() + 90_000
  try {
    await Promise.all(plans.map(({ health }) => waitHealthy(health, deadline)))
    if (dist) console.log(`[release] running the active builds in ${dist}; activating another restarts its process`)
    const origin = `http://localhost:${settings.port}`
    console.log(`\nAtrium is running at ${origin}/ (chat: ${origin}/chat/)  (Ctrl-C stops it)\n`)
  } catch (error) {
    console.error((error as Error).message)
    process.exitCode = 1
    stopAll('SIGTERM')
  }
  const codes = await Promise.all(exits)
  stopPrinting()
  if (codes.some((code) => code !== 0)) process.exitCode = 1
}

if (import.meta.main) await main()
