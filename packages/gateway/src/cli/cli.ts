import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import { ApiError, ConfigError, readConfigSection } from '@atrium/platform'
import { CLI_NODE_NUMBER, loadGatewayConfig } from '../config.ts'
import { createDnsCheck } from '../domains/dns-check.ts'
import { createProjectDomains } from '../domains/domains.repository.ts'
import { openGatewayStore } from '../store.ts'
import { appCommands, keyCommands } from './app-key-commands.ts'
import { type CliContext, type Command, CommandFailed, UsageError } from './command.ts'
import { mcpCommands } from './mcp-commands.ts'
import { partnerCommands } from './partner-commands.ts'
import { releaseCommands } from './release-commands.ts'
import { configCommands, domainCommands, routeCommands } from './route-domain-commands.ts'
import { userCommands } from './user-commands.ts'
import { webhookCommands } from './webhook-commands.ts'
import { webPushCommands } from './webpush-commands.ts'

/** Lanes of the CLI's node number: 32 of 4 ids a millisecond each. */
const CLI_LANES = 32

/**
 * The timetick lane of this CLI run. Every run writes with node number CLI_NODE_NUMBER, which no
 * gateway node may take, so a run's ids never meet a server's. Runs share that node number, so
 * each also takes a lane of its per-millisecond sequence by process id (issue 14, item 15): runs
 * started together, from one shell or script, have nearby process ids and so different lanes, and
 * ids on different lanes never meet. Two runs in one millisecond can meet only when their process
 * ids are a multiple of 32 apart: on one machine after the ids wrapped, or by a 1-in-32 chance
 * between machines sharing one PostgreSQL. A run makes a few ids; past 4 in a millisecond it
 * borrows the next millisecond, never another lane.
 */
export function cliTimetickLane(pid = process.pid): { index: number; count: number } {
  return { index: pid % CLI_LANES, count: CLI_LANES }
}

export const EXIT_OK = 0
export const EXIT_USAGE = 1
export const EXIT_FAILED = 2

const helpCommand: Command = {
  name: 'help',
  usage: '',
  summary: 'Show this help.',
  example: 'atrium help',
  needsConfig: false,
  async run() {
    return {
      text: helpText(),
      json: { commands: COMMANDS.map(({ name, usage, summary }) => ({ name, usage, summary })) },
    }
  },
}

const COMMANDS: Command[] = [
  ...userCommands,
  ...appCommands,
  ...keyCommands,
  ...routeCommands,
  ...domainCommands,
  ...configCommands,
  ...webPushCommands,
  ...webhookCommands,
  ...partnerCommands,
  ...mcpCommands,
  ...releaseCommands,
  helpCommand,
]

function usageLine(command: Command): string {
  return `atrium ${command.name}${command.usage ? ` ${command.usage}` : ''}`
}

function helpText(): string {
  return [
    'Usage: atrium <command> [options] [--json]',
    '',
    'Manages the gateway database named by the gateway settings (ATRIUM_CONFIG file, section',
    '"gateway", and environment variables such as GatewayDB), exactly as the gateway reads them.',
    'The release commands manage the builds under dist/ (--dist, or ATRIUM_DIST) instead: which',
    "build of each process runs, checked against that process's database (docs/operations.md).",
    '',
    'Commands:',
    ...COMMANDS.map((command) => `  ${usageLine(command)}\n      ${command.summary}`),
    '',
    'Options for every command: --json (machine-readable output), --help.',
    'Exit codes: 0 done, 1 wrong usage, 2 the command failed.',
  ].join('\n')
}

/** The commands whose first word is `group` (`user` → user create, user scopes, user list). */
function groupCommands(group: string | undefined): Command[] {
  return COMMANDS.filter((command) => command.name.includes(' ') && command.name.split(' ')[0] === group)
}

function groupHelpText(group: string, commands: Command[]): string {
  return [
    `Usage: atrium ${group} <command> [options] [--json]`,
    '',
    'Commands:',
    ...commands.map((command) => `  ${usageLine(command)}\n      ${command.summary}`),
    '',
    `Run \`atrium ${group} <command> --help\` for one command.`,
  ].join('\n')
}

function commandHelpText(command: Command): string {
  return `Usage: ${usageLine(command)}\n${command.summary}\nExample: ${command.example}`
}

const HELP_FLAGS = new Set(['--help', '-h'])

/** The command named by the first words of argv, and the remaining arguments. */
function findCommand(argv: string[]): { command: Command; rest: string[] } | undefined {
  const two = COMMANDS.find((command) => command.name === `${argv[0]} ${argv[1]}`)
  if (two) return { command: two, rest: argv.slice(2) }
  const one = COMMANDS.find((command) => command.name === argv[0])
  return one && { command: one, rest: argv.slice(1) }
}

export interface CliIo {
  out: (text: string) => void
  err: (text: string) => void
}

async function openContext(
  config: CliContext['config'],
  needsStore: boolean,
  serviceSecretUnset: boolean,
): Promise<{ context: CliContext; close: () => Promise<void> }> {
  const checkDomain = createDnsCheck({
    servers: config.Dns.Servers,
    timeoutMs: config.Dns.TimeoutMs,
    tries: config.Dns.Tries,
  })
  if (!needsStore) {
    const context = { config, checkDomain, serviceSecretUnset } as CliContext
    return { context, close: async () => {} }
  }
  const store = await openGatewayStore(config, { node: CLI_NODE_NUMBER, lane: cliTimetickLane() })
  const domains = createProjectDomains(store.db, store.nextTick, store.now)
  return { context: { config, store, domains, checkDomain, serviceSecretUnset }, close: store.close }
}

/** Runs one CLI invocation and returns its exit code; all output goes through `io`. */
export async function runCli(argv: string[], env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h') {
    io.out(helpText())
    return argv.length === 0 ? EXIT_USAGE : EXIT_OK
  }
  const found = findCommand(argv)
  const group = groupCommands(argv[0])
  // `atrium user` and `atrium user --help` list the group's commands (issue 16).
  if (!found && group.length > 0 && (argv.length === 1 || HELP_FLAGS.has(argv[1] ?? ''))) {
    const text = groupHelpText(argv[0]!, group)
    if (argv.length === 1) io.err(text)
    else io.out(text)
    return argv.length === 1 ? EXIT_USAGE : EXIT_OK
  }
  if (!found) {
    io.err(`atrium: unknown command ${JSON.stringify(argv.slice(0, 2).join(' '))}\n\n${helpText()}`)
    return EXIT_USAGE
  }
  const { command, rest } = found
  // Help wins over every other argument, even ones the command would refuse.
  if (rest.some((arg) => HELP_FLAGS.has(arg))) {
    io.out(commandHelpText(command))
    return EXIT_OK
  }
  let values: Record<string, string | boolean | undefined>
  let args: string[]
  try {
    const parsed = parseArgs({
      args: rest,
      options: { ...command.options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    })
    values = parsed.values
    args = parsed.positionals
    if (args.length !== (command.positionals ?? 0)) {
      throw new UsageError(`expected ${command.positionals ?? 0} argument(s), got ${args.length}`)
    }
  } catch (error) {
    io.err(`atrium ${command.name}: ${(error as Error).message}\nUsage: ${usageLine(command)}`)
    return EXIT_USAGE
  }

  let opened: Awaited<ReturnType<typeof openContext>> | undefined
  try {
    if (command.needsConfig !== false) {
      const needsStore = command.needsStore !== false
      const file = (readConfigSection(env.ATRIUM_CONFIG, 'gateway') ?? {}) as Record<string, unknown>
      // The CLI never calls a module, so it needs no inter-service secret: `npm start` makes a new
      // one per run that the CLI cannot know. `atrium config` shows a missing one as empty.
      const secretUnset = !env.ServiceSecret && !file.ServiceSecret
      const withSecret = secretUnset ? { ...file, ServiceSecret: randomBytes(32).toString('hex') } : file
      const config = loadGatewayConfig(withSecret, env)
      opened = await openContext(config, needsStore, secretUnset)
    }
    const output = await command.run({ values, args, env }, opened?.context ?? ({} as CliContext))
    io.out(values.json ? JSON.stringify(output.json, null, 2) : output.text)
    return EXIT_OK
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`atrium ${command.name}: ${error.message}\nUsage: ${usageLine(command)}`)
      return EXIT_USAGE
    }
    const known = error instanceof CommandFailed || error instanceof ApiError || error instanceof ConfigError
    const message = known ? (error as Error).message : `unexpected error: ${(error as Error)?.message ?? String(error)}`
    io.err(`atrium ${command.name}: ${message}`)
    if (values.json)
      io.out(JSON.stringify({ error: { message: known ? (error as Error).message : 'unexpected error' } }))
    return EXIT_FAILED
  } finally {
    await opened?.close()
  }
}
