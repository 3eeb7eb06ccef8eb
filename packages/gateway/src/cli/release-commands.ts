import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { appliedMigrations, createDatabase, isSemanticVersion, readConfigSection } from '@atrium/platform'
import {
  activeVersion,
  listBuilds,
  listReleaseProcesses,
  pointCurrent,
  type ReleaseManifest,
} from '@atrium/platform/releases'
import { type Command, CommandFailed, type CommandInput, formatTable, stringOption, UsageError } from './command.ts'

const DIST_OPTION = { dist: { type: 'string' } } as const
const PROCESS_NAME = /^[a-z][a-z0-9-]{0,62}$/

/** The builds directory: `--dist`, else ATRIUM_DIST, else `dist` in the working directory. */
function distDir({ values, env }: CommandInput): string {
  return resolve(stringOption(values, 'dist') ?? env.ATRIUM_DIST ?? 'dist')
}

const list: Command = {
  name: 'release list',
  usage: '[--dist <dir>]',
  summary: 'List the builds of each process under dist/ (npm run build) and which one is active.',
  example: 'atrium release list --dist /srv/atrium/dist',
  options: DIST_OPTION,
  needsConfig: false,
  async run(input) {
    const dist = distDir(input)
    const processes = await Promise.all(
      (await listReleaseProcesses(dist)).map(async (process) => ({
        process,
        active: (await activeVersion(dist, process)) ?? null,
        builds: await listBuilds(dist, process),
      })),
    )
    const rows = processes.flatMap(({ process, active, builds }) =>
      builds.map((build) => [
        process,
        build.version,
        build.version === active ? 'active' : '',
        build.builtAt,
        build.commit?.slice(0, 12) ?? '-',
        `${build.schema.setting} ${build.schema.migration}`,
        build.domain,
      ]),
    )
    const text =
      rows.length === 0
        ? `no builds in ${dist}: make them with npm run build -- --domain <project domain>`
        : formatTable(['PROCESS', 'VERSION', 'STATE', 'BUILT', 'COMMIT', 'NEEDS SCHEMA', 'DOMAIN'], rows)
    return { text, json: { dist, processes } }
  },
}

/** The database URL a process's build runs on: `--database`, else its setting from the environment or config file. */
function databaseUrl(input: CommandInput, build: ReleaseManifest): string {
  const given = stringOption(input.values, 'database')
  if (given) return given
  const setting = build.schema.setting
  const section = readConfigSection(input.env.ATRIUM_CONFIG, build.process) as Record<string, unknown>
  const url = input.env[setting] ?? section[setting]
  if (typeof url === 'string' && url !== '') return url
  throw new CommandFailed(
    `cannot check the schema ${build.process} ${build.version} needs: set ${setting} (environment, or the "${build.process}" section of the ATRIUM_CONFIG file) or pass --database`,
  )
}

/**
 * Refuses a build whose newest migration the database has not applied: it would run on a schema
 * older than it was written for. An older build on a newer schema is fine (expand-then-contract).
 */
async function checkSchema(input: CommandInput, build: ReleaseManifest): Promise<void> {
  const url = databaseUrl(input, build)
  // Opening a SQLite file that is not there would create an empty one.
  if (url.startsWith('sqlite:') && !existsSync(url.slice('sqlite:'.length))) {
    throw new CommandFailed(`${build.schema.setting} names ${url}, which does not exist`)
  }
  const database = createDatabase(url)
  let applied: string[]
  try {
    applied = await appliedMigrations(database)
  } finally {
    await database.destroy()
  }
  const { setting, migration } = build.schema
  if (applied.includes(migration)) return
  const newest = applied.at(-1)
  throw new CommandFailed(
    `refused: ${build.process} ${build.version} needs the ${setting} schema at migration ${migration}, ` +
      `but the database ${newest ? `is at ${newest}` : 'has no migrations applied'}. ` +
      `To upgrade, activate it with --migrate: it applies its migrations as it starts, and builds from ` +
      `before them keep working on the new schema (docs/operations.md, "Releases and rollback").`,
  )
}

const activate: Command = {
  name: 'release activate',
  usage: '<process> <version> [--dist <dir>] [--database <url>] [--migrate]',
  summary:
    "Make a build the process's active one (dist/<process>/current); a start script watching dist restarts that process on it. Refused when the database lacks the build's newest migration, unless --migrate lets the build apply it as it starts.",
  example: 'atrium release activate chat 1.2.0',
  options: { ...DIST_OPTION, database: { type: 'string' }, migrate: { type: 'boolean' } },
  positionals: 2,
  needsConfig: false,
  async run(input) {
    const [process, version] = input.args as [string, string]
    if (!PROCESS_NAME.test(process)) throw new UsageError(`invalid process name ${JSON.stringify(process)}`)
    if (!isSemanticVersion(version)) {
      throw new UsageError(`invalid version ${JSON.stringify(version)}: give a semantic version such as 1.2.0`)
    }
    const dist = distDir(input)
    const builds = await listBuilds(dist, process)
    const build = builds.find((candidate) => candidate.version === version)
    if (!build) {
      const known = builds.map((candidate) => candidate.version).join(', ')
      throw new CommandFailed(
        `no build ${process} ${version} in ${dist}${known ? ` (its builds: ${known})` : ` (no builds of ${process})`}`,
      )
    }
    const previous = (await activeVersion(dist, process)) ?? null
    const migrate = input.values.migrate === true
    if (!migrate) await checkSchema(input, build)
    if (previous !== version) await pointCurrent(dist, process, version)
    const text =
      previous === version
        ? `${process} ${version} is already active`
        : [
            `${process}: ${previous ?? '(none)'} -> ${version}`,
            migrate ? `It applies its migrations up to ${build.schema.migration} as it starts.` : '',
            `A start script watching ${dist} restarts ${process} on it; under another supervisor, restart the ${process} process.`,
          ]
            .filter(Boolean)
            .join('\n')
    return { text, json: { process, version, previous, changed: previous !== version, build } }
  },
}

export const releaseCommands: Command[] = [list, activate]
