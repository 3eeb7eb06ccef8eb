import { ApiError } from '@atrium/platform'
import { SCOPE_NAME } from '../auth/caller.ts'
import type { GatewayConfig } from '../config.ts'
import type { DnsCheck } from '../domains/dns-check.ts'
import type { ProjectDomains } from '../domains/domains.repository.ts'
import type { GatewayStore } from '../store.ts'

/** Wrong use of the CLI: answered with the message and the command's usage, exit code 1. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/** A failure of a well-formed command (no such user, DNS check failed …): exit code 2. */
export class CommandFailed extends Error {
  override name = 'CommandFailed'
}

/**
 * A refusal of the shared rules (apps, contacts …) said as the CLI says it: malformed input is a
 * usage error, any other refusal a failure of the command; anything else passes through.
 */
export function asCommandError(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error
  return error.name === 'InvalidRequest' ? new UsageError(error.message) : new CommandFailed(error.message)
}

/** A value checked by a shared rule, its refusal said as the CLI says it. */
export function checked<T>(check: () => T): T {
  try {
    return check()
  } catch (error) {
    throw asCommandError(error)
  }
}

/** What a command works with: the gateway's settings and the same repositories the server uses. */
export interface CliContext {
  config: GatewayConfig
  store: GatewayStore
  domains: ProjectDomains
  checkDomain: DnsCheck
  /** True when neither the file nor the environment sets ServiceSecret (the CLI then uses a throwaway one). */
  serviceSecretUnset: boolean
}

/** A command's answer: `text` for people, `json` for `--json`. */
export interface CommandOutput {
  text: string
  json: unknown
}

export interface CommandInput {
  /** Option values by name, as node:util parseArgs gives them. */
  values: Record<string, string | boolean | undefined>
  /** Positional arguments after the command words. */
  args: string[]
  /** The environment the CLI runs in (the release commands read ATRIUM_DIST and database settings). */
  env: Record<string, string | undefined>
}

export interface Command {
  /** The command words, e.g. `user create`. */
  name: string
  /** Arguments and options after the name, e.g. `<crmId> <scopes>`. */
  usage: string
  summary: string
  example: string
  options?: Record<string, { type: 'string' | 'boolean' }>
  /** Number of positional arguments required (exactly). */
  positionals?: number
  /** False for commands that need no database (`config`). */
  needsStore?: boolean
  /** False for commands that need no settings either (`help`). */
  needsConfig?: boolean
  run(input: CommandInput, context: CliContext): Promise<CommandOutput>
}

/** An option's string value, or undefined. */
export function stringOption(values: CommandInput['values'], name: string): string | undefined {
  const value = values[name]
  return typeof value === 'string' ? value : undefined
}

/** Comma- or space-separated items of an option, without empties. */
export function listOption(values: CommandInput['values'], name: string): string[] {
  return (stringOption(values, name) ?? '').split(/[\s,]+/).filter(Boolean)
}

/** Validated scope names from a comma- or space-separated list. */
export function parseScopeList(text: string): string[] {
  const scopes = [...new Set(text.split(/[\s,]+/).filter(Boolean))]
  const bad = scopes.filter((scope) => !SCOPE_NAME.test(scope))
  if (bad.length > 0) throw new UsageError(`invalid scope ${JSON.stringify(bad[0])}: letters, digits and : . _ - only`)
  return scopes
}

/** A positive integer id given on the command line. */
export function parseId(text: string | undefined, what: string): number {
  if (text === undefined || !/^[1-9][0-9]{0,15}$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`${what} must be a positive integer id, got ${JSON.stringify(text ?? '')}`)
  }
  return Number(text)
}

/** Flag names (e.g. `AppAuthAndCORS,RequireSession`) or a number to bits of the given flag table. */
export function parseFlags(text: string | undefined, table: Record<string, number>): number {
  if (text === undefined || text === '') return 0
  if (/^[0-9]+$/.test(text)) return Number(text)
  let bits = 0
  for (const name of text.split(/[\s,|]+/).filter(Boolean)) {
    const bit = Object.entries(table).find(([flag]) => flag.toLowerCase() === name.toLowerCase())?.[1]
    if (bit === undefined)
      throw new UsageError(`unknown flag ${JSON.stringify(name)}; known: ${Object.keys(table).join(', ')}`)
    bits |= bit
  }
  return bits
}

/** Names of the bits set in `bits`, e.g. `AppAuthAndCORS,RequireSession`, or `-` for none. */
export function flagNames(bits: number, table: Record<string, number>): string {
  const names = Object.entries(table)
    .filter(([, bit]) => (bits & bit) === bit)
    .map(([name]) => name)
  return names.length > 0 ? names.join(',') : '-'
}

/** Rows as an aligned text table with a header line. */
export function formatTable(headers: string[], rows: string[][]): string {
  if (rows.length === 0) return '(none)'
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)))
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd()
  return [line(headers), ...rows.map(line)].join('\n')
}

/** Epoch milliseconds as an ISO time, or `-` for 0. */
export function formatTime(ms: number): string {
  return ms > 0 ? new Date(ms).toISOString() : '-'
}
