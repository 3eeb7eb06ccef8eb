/** The deployable processes of the checkout: where each one's code, version and migrations are. */
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { type Migrations, type PackageVersions, processVersion } from '@atrium/platform'

/** The checkout the scripts belong to. */
const ROOT = fileURLToPath(new URL('..', import.meta.url))

interface ProcessSource {
  /** Entry point, relative to the checkout root. */
  entry: string
  /** The package whose package.json versions the process (`version`, or its entry in `processVersions`). */
  package: string
  /** The setting naming the process's database. */
  database: string
  /** The module exporting its migrations, and the export's name. */
  migrations: [file: string, exportName: string]
}

/** Each deployable process: where its code, version and migrations are, relative to the checkout root. */
export const PROCESSES = {
  gateway: {
    entry: 'packages/gateway/src/main.ts',
    package: 'packages/gateway',
    database: 'GatewayDB',
    migrations: ['packages/gateway/src/db/migrations/index.ts', 'gatewayMigrations'],
  },
  chat: {
    entry: 'packages/chat/src/main.ts',
    package: 'packages/chat',
    database: 'ChatDB',
    migrations: ['packages/chat/src/db/migrations/index.ts', 'chatMigrations'],
  },
  wallet: {
    entry: 'packages/reference/src/wallet/main.ts',
    package: 'packages/reference',
    database: 'WalletDB',
    migrations: ['packages/reference/src/wallet/db/migrations/index.ts', 'walletMigrations'],
  },
  crm: {
    entry: 'packages/reference/src/crm/main.ts',
    package: 'packages/reference',
    database: 'CrmDB',
    migrations: ['packages/reference/src/crm/db/migrations/index.ts', 'crmMigrations'],
  },
  payment: {
    entry: 'packages/reference/src/payment/main.ts',
    package: 'packages/reference',
    database: 'PaymentDB',
    migrations: ['packages/reference/src/payment/db/migrations/index.ts', 'paymentMigrations'],
  },
} as const satisfies Record<string, ProcessSource>

export type ProcessName = keyof typeof PROCESSES

/** A process's own semantic version, from its package's package.json (docs/operations.md, "Releases and rollback"). */
export async function readProcessVersion(name: ProcessName, root = ROOT): Promise<string> {
  const file = join(root, PROCESSES[name].package, 'package.json')
  return processVersion(JSON.parse(await readFile(file, 'utf8')) as PackageVersions, name)
}

/** The newest migration of a process, which a database must have applied before its build may run there. */
export async function readNeededMigration(name: ProcessName, root = ROOT): Promise<string> {
  const [file, exportName] = PROCESSES[name].migrations
  const module = (await import(pathToFileURL(join(root, file)).href)) as Record<string, Migrations | undefined>
  const newest = Object.keys(module[exportName] ?? {})
    .sort()
    .at(-1)
  if (newest === undefined) throw new Error(`${file} exports no migrations as ${exportName}`)
  return newest
}

/** The commit checked out at `root`, or undefined when it is not a git checkout (or git is missing). */
export async function readCommit(root = ROOT): Promise<string | undefined> {
  try {
    const { stdout } = await promisify(execFile)('git', ['rev-parse', 'HEAD'], { cwd: root })
    return stdout.trim() || undefined
  } catch {
    return undefined
  }
}
