/**
 * `npm start`: runs the whole system on one machine with the embedded default: the gateway on
 * http://localhost:8080 and the chat, wallet and CRM modules on loopback ports, each with its
 * SQLite file under ./data. Ctrl-C (or SIGTERM) stops them all gracefully. Further settings come
 * from the file named by ATRIUM_CONFIG (see docs/configuration.md).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { buildClient, clientBuildIsStale } from '../packages/web/build-client.ts'

interface ProcessPlan {
  name: string
  entry: string
  health: string
  env: Record<string, string>
}

const root = new URL('../', import.meta.url)
const modules = { chat: 8081, wallet: 8082, crm: 8083 }
const moduleUrl = (port: number) => `http://127.0.0.1:${port}`

/** The processes `npm start` runs, with the environment each gets on top of the caller's. */
export function plan(dataDir: string): ProcessPlan[] {
  const local = (name: string, entry: string, port: number, database: Record<string, string>): ProcessPlan => ({
    name,
    entry,
    health: `${moduleUrl(port)}/private/v1/health`,
    env: { Host: '127.0.0.1', Port: String(port), ...database },
  })
  return [
    local('chat', 'packages/chat/src/main.ts', modules.chat, { ChatDB: `sqlite:${dataDir}/chat.db` }),
    local('wallet', 'packages/reference/src/wallet/main.ts', modules.wallet, {
      WalletDB: `sqlite:${dataDir}/wallet.db`,
    }),
    local('crm', 'packages/reference/src/crm/main.ts', modules.crm, { CrmDB: `sqlite:${dataDir}/crm.db` }),
    {
      name: 'gateway',
      entry: 'packages/gateway/src/main.ts',
      health: 'http://localhost:8080/auth/v1/health',
      env: {
        Host: 'localhost',
        Port: '8080',
        GatewayDB: `sqlite:${dataDir}/gateway.db`,
        LocalFileStoragePath: `${dataDir}/files`,
        // The chat API is public behind the gateway: chat answers anonymous callers only for invite guests.
        // The wallet has no guests: its route needs a session.
        Proxy__Routes: JSON.stringify([
          { Prefix: '/msg/', Upstream: 'chat', Flags: ['AppAuthAndCORS'] },
          { Prefix: '/wallet/', Upstream: 'wallet', Flags: ['AppAuthAndCORS', 'RequireSession'] },
        ]),
        Modules: JSON.stringify(
          Object.fromEntries(Object.entries(modules).map(([name, port]) => [name, moduleUrl(port)])),
        ),
      },
    },
  ]
}

function startProcess({ name, entry, env }: ProcessPlan, serviceSecret: string): ChildProcess {
  const child = spawn(process.execPath, [new URL(entry, root).pathname], {
    env: { ServiceSecret: serviceSecret, ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream! }).on('line', (line) => console.log(`[${name}] ${line}`))
  }
  return child
}

async function waitHealthy(url: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${url} did not become healthy`)
}

/** Builds the chat client the gateway serves at /chat/ when its build is missing or older than its sources. */
async function ensureClientBuild() {
  if (!(await clientBuildIsStale())) return
  const started = performance.now()
  const dir = await buildClient()
  console.log(`[web] built the chat client into ${dir} in ${Math.round(performance.now() - started)} ms`)
}

async function main() {
  await ensureClientBuild()
  const dataDir = 'data'
  mkdirSync(dataDir, { recursive: true })
  const plans = plan(dataDir)
  // The processes of one `npm start` share a fresh inter-service secret unless one is configured.
  const serviceSecret = randomBytes(32).toString('base64url')
  const children = plans.map((processPlan) => ({ plan: processPlan, child: startProcess(processPlan, serviceSecret) }))
  let stopping = false

  function stopAll(signal: NodeJS.Signals) {
    stopping = true
    for (const { child } of children) if (child.exitCode === null) child.kill(signal)
  }
  process.on('SIGINT', () => stopAll('SIGTERM'))
  process.on('SIGTERM', () => stopAll('SIGTERM'))

  const exits = children.map(
    ({ plan: { name }, child }) =>
      new Promise<number>((resolve) =>
        child.on('exit', (code) => {
          if (!stopping) {
            console.error(`[${name}] exited unexpectedly (code ${code}); stopping the others`)
            process.exitCode = 1
            stopAll('SIGTERM')
          }
          resolve(code ?? 1)
        }),
      ),
  )

  const deadline = Date.now() + 30_000
  try {
    await Promise.all(plans.map(({ health }) => waitHealthy(health, deadline)))
    console.log(
      '\nAtrium is running at http://localhost:8080/ (chat: http://localhost:8080/chat/)  (Ctrl-C stops it)\n',
    )
  } catch (error) {
    console.error((error as Error).message)
    process.exitCode = 1
    stopAll('SIGTERM')
  }
  const codes = await Promise.all(exits)
  if (codes.some((code) => code !== 0)) process.exitCode = 1
}

if (import.meta.main) await main()
