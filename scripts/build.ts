import { copyFile, mkdir, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { isIP } from 'node:net'
import { basename, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import type { BuildInfo } from '@atrium/platform'
import { activeVersion, MANIFEST_FILE, pointCurrent, type ReleaseManifest, releaseDir } from '@atrium/platform/releases'
import { build, type Plugin } from 'esbuild'
import { COUNTRY_DATA } from '../packages/gateway/src/audit/country.ts'
import { buildClient } from '../packages/web/build-client.ts'
import { PROCESSES, type ProcessName, readCommit, readNeededMigration, readProcessVersion } from './processes.ts'

/** The checkout the script belongs to; entries and the root package.json are found from here. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** Data files a process reads at run time, copied from installed packages into a folder beside its bundle. */
const PROCESS_DATA: Partial<Record<ProcessName, { dir: string; files: string[] }>> = { gateway: COUNTRY_DATA }

/**
 * Scripts a process starts as worker threads, bundled beside its main.mjs under these names: a
 * module finds its worker's bundle as `./<name>` next to main.mjs (stun-threads.ts; every process
 * with a database: the platform's SQLite checkpoint thread, database/sqlite-checkpoints.ts).
 */
const SQLITE_CHECKPOINTER = { 'sqlite-checkpointer.mjs': 'packages/platform/src/database/sqlite-checkpointer.ts' }
const PROCESS_WORKERS: Record<ProcessName, Record<string, string>> = {
  gateway: { 'stun-worker.mjs': 'packages/gateway/src/stun/stun-worker.ts', ...SQLITE_CHECKPOINTER },
  chat: SQLITE_CHECKPOINTER,
  wallet: SQLITE_CHECKPOINTER,
  crm: SQLITE_CHECKPOINTER,
  payment: SQLITE_CHECKPOINTER,
}

const BUILD_INFO_MODULE = 'packages/platform/src/build-info.ts'

// Optional native add-ons their dependents load in try/catch; bundling them would fail the build.
const OPTIONAL_NATIVE_MODULES = ['pg-native', 'bufferutil', 'utf-8-validate', 'fsevents', '*.node']

// CommonJS dependencies (Fastify, pino, pg) call require(), which an ESM bundle must provide.
const REQUIRE_BANNER =
  "import { createRequire as __atriumCreateRequire } from 'node:module'\n" +
  'const require = __atriumCreateRequire(import.meta.url)'

const USAGE = 'usage: npm run build -- --domain <project domain> [--out <dir>]'

/** A problem with the command line; the script prints it with the usage and exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(`${message}\n${USAGE}`)
    this.name = 'UsageError'
  }
}

export interface BuildArgs {
  /** The project domain embedded in every bundle, lower-case, without port or scheme. */
  domain: string
  /** Output directory, resolved against the current directory. */
  out: string
}

const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/** Explains why a name cannot be a project domain, or returns undefined when it can. */
export function domainProblem(domain: string): string | undefined {
  if (domain === '') return 'the domain is empty'
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(domain)) return `${domain}: give the bare domain, without a scheme`
  if (isIP(domain) || isIP(domain.replace(/^\[|\]$/g, ''))) {
    return `${domain}: an IP address cannot be a project domain; give a DNS name`
  }
  if (domain.includes(':')) return `${domain}: give the domain without a port`
  if (domain.includes('/')) return `${domain}: give the bare domain, without a path`
  if (domain !== domain.toLowerCase()) return `${domain}: use lower case (${domain.toLowerCase()})`
  if (domain === 'localhost' || domain.endsWith('.localhost')) {
    return `${domain}: localhost is a development sentinel every build accepts; give the project domain`
  }
  if (domain.length > 253) return `${domain}: longer than 253 characters`
  const labels = domain.split('.')
  if (labels.length < 2) return `${domain}: a project domain has at least two labels, e.g. example.com`
  const bad = labels.find((label) => !DNS_LABEL.test(label))
  if (bad !== undefined) {
    return `${domain}: label ${JSON.stringify(bad)} must be 1-63 of a-z, 0-9 and inner hyphens`
  }
  if (/^[0-9]+$/.test(labels.at(-1)!)) return `${domain}: the top-level label cannot be numeric`
  return undefined
}

function readOptions(argv: string[]): { domain?: string; out?: string } {
  try {
    return parseArgs({
      args: argv,
      options: { domain: { type: 'string' }, out: { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }).values
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

/** Reads `--domain <name>` (required) and `--out <dir>` (default `dist`); throws UsageError on anything else. */
export function parseBuildArgs(argv: string[], cwd = process.cwd()): BuildArgs {
  const { domain, out } = readOptions(argv)
  if (domain === undefined) throw new UsageError('--domain is required')
  const problem = domainProblem(domain)
  if (problem) throw new UsageError(`invalid --domain: ${problem}`)
  if (out === '') throw new UsageError('--out must name a directory')
  return { domain, out: resolve(cwd, out ?? 'dist') }
}

/** The root package's engines, which every bundle's package.json carries. */
export async function readRootEngines(root = ROOT): Promise<Record<string, string>> {
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { engines?: Record<string, string> }
  return pkg.engines ?? {}
}

/**
 * An esbuild plugin that replaces the body of the platform's build-info module (at its real path)
 * with `info`, and fails the build when no module was replaced: that bundle would run as a
 * development build.
 */
export function embedBuildInfo(info: BuildInfo, modulePath: string): Plugin {
  return {
    name: 'atrium-build-info',
    setup(esbuild) {
      let embedded = false
      esbuild.onStart(() => {
        embedded = false
      })
      esbuild.onLoad({ filter: /[\\/]build-info\.ts$/ }, function loadBuildInfo(args) {
        if (args.path !== modulePath) return undefined
        embedded = true
        return { contents: `export const buildInfo = Object.freeze(${JSON.stringify(info)})\n`, loader: 'js' }
      })
      esbuild.onEnd(() => {
        if (embedded) return undefined
        return { errors: [{ text: `the bundle does not include ${modulePath}, so no domain is embedded` }] }
      })
    },
  }
}

/**
 * Resolves a relative `require('./x.node')` to `x.node.js` where that JavaScript file exists and no
 * native add-on of that name does (grammY's `./platform.node`), so that the `*.node` pattern of
 * OPTIONAL_NATIVE_MODULES leaves only real add-ons outside the bundle.
 */
export function scriptsNamedDotNode(): Plugin {
  return {
    name: 'atrium-scripts-named-dot-node',
    setup(esbuild) {
      esbuild.onResolve({ filter: /^\.\.?\/.*\.node$/ }, async ({ path, resolveDir }) => {
        const addon = join(resolveDir, path)
        if (await exists(addon)) return undefined
        return (await exists(`${addon}.js`)) ? { path: `${addon}.js` } : undefined
      })
    },
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch {
    return false
  }
}

export interface BuiltFile {
  path: string
  bytes: number
}

export interface BuildProcessOptions {
  name: ProcessName
  info: BuildInfo
  /** The newest migration the build applies (its manifest's schema need). */
  migration: string
  commit?: string
  /** Output directory; the process's files go to `<out>/<name>/<version>/`. */
  out: string
  engines: Record<string, string>
  root?: string
}

/**
 * Bundles one process into `<out>/<name>/<version>/` (replacing an earlier build of that version)
 * with its manifest.json and package.json; returns what it wrote.
 */
export async function buildProcess({
  name,
  info,
  migration,
  commit,
  out,
  engines,
  root = ROOT,
}: BuildProcessOptions): Promise<BuiltFile[]> {
  const dir = releaseDir(out, name, info.version)
  await rm(dir, { recursive: true, force: true })
  const outfile = join(dir, 'main.mjs')
  const buildInfoPath = await realpath(join(root, BUILD_INFO_MODULE))
  const common = {
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    sourcemap: 'linked',
    external: OPTIONAL_NATIVE_MODULES,
    banner: { js: REQUIRE_BANNER },
    logLevel: 'warning',
  } as const
  await build({
    ...common,
    entryPoints: [join(root, PROCESSES[name].entry)],
    outfile,
    plugins: [embedBuildInfo(info, buildInfoPath), scriptsNamedDotNode()],
  })
  // Worker threads' scripts, each its own bundle beside main.mjs (they hold no build information).
  const workers = Object.entries(PROCESS_WORKERS[name])
  const workerPaths = await Promise.all(
    workers.map(async ([file, entry]) => {
      const workerFile = join(dir, file)
      await build({
        ...common,
        entryPoints: [join(root, entry)],
        outfile: workerFile,
        plugins: [scriptsNamedDotNode()],
      })
      return [workerFile, `${workerFile}.map`]
    }),
  )

  const manifest: ReleaseManifest = {
    process: name,
    ...info,
    ...(commit !== undefined && { commit }),
    schema: { setting: PROCESSES[name].database, migration },
  }
  const manifestJson = join(dir, MANIFEST_FILE)
  await writeFile(manifestJson, `${JSON.stringify(manifest, null, 2)}\n`)
  const packageJson = join(dir, 'package.json')
  await writeFile(packageJson, `${JSON.stringify({ type: 'module', private: true, engines }, null, 2)}\n`)

  const data = PROCESS_DATA[name]
  const dataPaths = data ? await copyData(data, join(dir, data.dir), root) : []
  const paths = [outfile, `${outfile}.map`, ...workerPaths.flat(), manifestJson, packageJson, ...dataPaths]
  return Promise.all(paths.map(async (path) => ({ path, bytes: (await stat(path)).size })))
}

/** Copies package files (`<package>/<file>`, resolved from the checkout) into `dir`; returns the copies. */
async function copyData({ files }: { files: string[] }, dir: string, root: string): Promise<string[]> {
  await mkdir(dir, { recursive: true })
  const from = createRequire(join(root, 'package.json'))
  return Promise.all(
    files.map(async (file) => {
      const target = join(dir, basename(file))
      await copyFile(from.resolve(file), target)
      return target
    }),
  )
}

/**
 * Builds the chat client into `<out>/web/chat/`, the directory a deployed gateway serves at `/chat/`
 * (`Static.Apps`), with the project domain embedded (a page opened on it moves to the fastest of
 * p1, p2 and p3); returns its files.
 */
export async function buildWebClient(out: string, domain: string): Promise<BuiltFile[]> {
  const dir = await buildClient(join(out, 'web', 'chat'), domain)
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  const paths = entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name))
  return Promise.all(paths.sort().map(async (path) => ({ path, bytes: (await stat(path)).size })))
}

export interface BuildAllOptions extends BuildArgs {
  processes?: readonly ProcessName[]
  /** Also build the chat client into `<out>/web/chat/` (default true). */
  client?: boolean
  root?: string
  now?: Date
}

/** One process's build: its version, whether it is the active one, and its files. */
export interface BuiltProcess {
  version: string
  /** True when `current` points at this build (the first build of a process is made active). */
  active: boolean
  files: BuiltFile[]
}

/**
 * Builds every process (or the given ones), each as `<out>/<process>/<version>/` beside its earlier
 * builds, and the chat client. A process's first build becomes its active one; later builds wait
 * for `atrium release activate`. Returns the processes' builds and the client's files.
 */
export async function buildAll({
  domain,
  out,
  processes = Object.keys(PROCESSES) as ProcessName[],
  client = true,
  root = ROOT,
  now = new Date(),
}: BuildAllOptions): Promise<{ processes: Record<string, BuiltProcess>; web?: BuiltFile[] }> {
  const [engines, commit] = await Promise.all([readRootEngines(root), readCommit(root)])
  await mkdir(out, { recursive: true })
  const built = await Promise.all(
    processes.map(async (name): Promise<[string, BuiltProcess]> => {
      const [version, migration] = await Promise.all([readProcessVersion(name, root), readNeededMigration(name, root)])
      const info: BuildInfo = { domain, version, builtAt: now.toISOString() }
      const files = await buildProcess({ name, info, migration, commit, out, engines, root })
      if ((await activeVersion(out, name)) === undefined) await pointCurrent(out, name, version)
      return [name, { version, active: (await activeVersion(out, name)) === version, files }]
    }),
  )
  return {
    processes: Object.fromEntries(built),
    ...(client && { web: await buildWebClient(out, domain) }),
  }
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`
}

/** Runs the command line: builds every process and prints each file written. */
export async function main(argv: string[]): Promise<void> {
  const args = parseBuildArgs(argv)
  const started = performance.now()
  const built = await buildAll(args)
  const printFiles = (files: BuiltFile[]) => {
    for (const file of files) console.log(`  ${relative(process.cwd(), file.path)}  ${formatBytes(file.bytes)}`)
  }
  for (const [name, { version, active, files }] of Object.entries(built.processes)) {
    const state = active ? 'active' : `not active: atrium release activate ${name} ${version}`
    console.log(`${name} ${version} (${state}):`)
    printFiles(files)
  }
  console.log('web:')
  printFiles(built.web ?? [])
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  const processes = Object.keys(built.processes).length
  console.log(`built ${processes} processes and the chat client for ${args.domain} in ${seconds}s into ${args.out}`)
  console.log(
    `run the active build of one with: node --enable-source-maps ${relative(process.cwd(), join(args.out, 'gateway', 'current', 'main.mjs'))}`,
  )
  console.log(
    `serve the chat client with Static.Apps {"/chat/": "${relative(process.cwd(), join(args.out, 'web', 'chat'))}"}`,
  )
}

if (import.meta.main) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`build: ${error.message}`)
      process.exit(2)
    }
    console.error(error)
    process.exit(1)
  })
}
