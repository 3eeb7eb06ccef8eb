/**
 * Plumbing of the chat benchmark (bench/chat.ts): the benchmark's database (a temp SQLite file or a
 * new PostgreSQL schema), the chat module in this process, signed calls, chats created through the
 * API, and the load generator child process.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { signedHeaders } from '@atrium/platform'
import { Client, escapeIdentifier } from 'pg'
import { buildChat } from '../packages/chat/src/app.ts'
import { loadChatConfig } from '../packages/chat/src/config.ts'
import { type ChatLayout, pick } from './chat-data.ts'
import type { LoadResult, LoadSpec } from './http-load.ts'

/** The inter-service secret the benchmark's server and load generator share. */
export const SECRET = 'chat-bench-service-secret'.padEnd(40, '-')

export interface BenchDatabase {
  url: string
  /** A kept SQLite file from an earlier run. */
  reused: boolean
  /** Empties a kept database (file or schema), so it is loaded anew. */
  reset(): Promise<void>
  /** Removes the temp SQLite file or drops the PostgreSQL schema, unless kept. */
  remove(): Promise<void>
}

/**
 * SQLite: a file in a new temp directory, or with `keep` a fixed file per message count in the temp
 * directory. PostgreSQL: a new schema `bench_chat_<random>` on DATABASE_URL's server, selected with ?schema=,
 * or with `keep` the schema `bench_chat_keep_<messages>`, reused when it already holds messages.
 */
export async function provisionDatabase(dialect: 'sqlite' | 'postgres', keep: boolean, messages: number) {
  if (dialect === 'sqlite') {
    const directory = keep ? tmpdir() : mkdtempSync(join(tmpdir(), 'atrium-bench-chat-'))
    const file = join(directory, keep ? `atrium-bench-chat-${messages}.db` : 'chat.db')
    return {
      url: `sqlite:${file}`,
      reused: keep && existsSync(file),
      async reset() {
        for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
      },
      async remove() {
        if (keep) console.log(`kept ${file}`)
        else rmSync(directory, { recursive: true, force: true })
      },
    } satisfies BenchDatabase
  }
  const server = process.env.DATABASE_URL
  if (!server?.startsWith('postgres')) throw new Error('--db postgres needs DATABASE_URL=postgres://…')
  const schema = keep ? `bench_chat_keep_${messages}` : `bench_chat_${randomBytes(6).toString('hex')}`
  const onServer = async (statement: string) => {
    const client = new Client({ connectionString: server })
    await client.connect()
    return client.query(statement).finally(() => client.end())
  }
  const existing = await onServer(
    `select 1 from information_schema.tables where table_schema = '${schema}' and table_name = 'chat_mess'`,
  )
  const reused = keep && (existing.rowCount ?? 0) > 0
  if (!reused)
    await onServer(
      `drop schema if exists ${escapeIdentifier(schema)} cascade; create schema ${escapeIdentifier(schema)}`,
    )
  const url = new URL(server)
  url.searchParams.set('schema', schema)
  return {
    url: url.toString(),
    reused,
    async reset() {
      await onServer(
        `drop schema if exists ${escapeIdentifier(schema)} cascade; create schema ${escapeIdentifier(schema)}`,
      )
    },
    async remove() {
      if (keep) console.log(`kept schema ${schema}`)
      else await onServer(`drop schema if exists ${escapeIdentifier(schema)} cascade`)
    },
  } satisfies BenchDatabase
}

export interface Server {
  base: string
  close(): Promise<void>
}

/** The chat module on an ephemeral loopback port, logging only its errors (to stderr, so a failed request's cause is seen). */
export async function startServer(url: string): Promise<Server> {
  const config = loadChatConfig({ ChatDB: url, ServiceSecret: SECRET, LogLevel: 'error', NodeNumber: 0 }, {})
  const app = await buildChat(config, { logger: { level: 'error', stream: process.stderr } })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('server has no TCP address')
  return { base: `http://127.0.0.1:${address.port}`, close: () => app.close() }
}

export interface CallAnswer {
  status: number
  // biome-ignore lint/suspicious/noExplicitAny: the benchmark reads a few fields of the answer
  result?: any
  error?: string
}

/** One call signed as the gateway signs it: the envelope's result, or the status and start of the body. */
export async function call(
  base: string,
  method: 'GET' | 'POST',
  path: string,
  crm?: number,
  body?: object,
): Promise<CallAnswer> {
  const headers: Record<string, string> = crm === undefined ? {} : { 'X-Crm': String(crm) }
  if (body) headers['content-type'] = 'application/json'
  const response = await fetch(`${base}${path}`, {
    method,
    headers: signedHeaders(SECRET, method, path, headers),
    body: body && JSON.stringify(body),
  })
  const text = await response.text()
  if (response.status !== 200) return { status: response.status, error: text.slice(0, 300) }
  return { status: 200, result: JSON.parse(text).result }
}

export interface ChatPlan {
  users: number[]
  groups: number
  groupSize: number
  bigMembers: number
  random: () => number
}

/**
 * Registers people in the chat module as the gateway's profile sync does (set_profiles, 500 a
 * call): chats may name only people the module knows (docs/people.md).
 */
export async function registerUsers(base: string, users: number[]): Promise<void> {
  for (let start = 0; start < users.length; start += 500) {
    const profiles = users.slice(start, start + 500).map((member) => ({ member: String(member), name: '' }))
    const answer = await call(base, 'POST', '/private/v1/set_profiles', undefined, { profiles })
    if (answer.status !== 200) throw new Error(`set_profiles: ${answer.status} ${answer.error}`)
  }
}

/** Group chats of random users and one big chat of the first users, created through the API. */
export async function createChats(base: string, plan: ChatPlan): Promise<{ chats: ChatLayout[]; bigChat: number }> {
  await registerUsers(base, plan.users)
  const chats: ChatLayout[] = []
  const create = async (owner: number, members: number[], name: string) => {
    const body = { type: 2, name, members: members.map(String) }
    const answer = await call(base, 'POST', '/msg/v1/create_chat', owner, body)
    if (answer.status !== 200) throw new Error(`create_chat: ${answer.status} ${answer.error}`)
    chats.push({ id: Number(answer.result.chat.id), members: [owner, ...members] })
  }
  await create(plan.users[0]!, plan.users.slice(1, plan.bigMembers), 'Everyone')
  for (let i = 0; i < plan.groups; i++) {
    const members = new Set<number>()
    while (members.size < plan.groupSize) members.add(pick(plan.random, plan.users))
    const [owner, ...rest] = [...members]
    await create(owner!, rest, `Group ${i + 1}`)
  }
  return { chats, bigChat: chats[0]!.id }
}

/** Runs bench/http-load.ts in a child process with the spec on its standard input. */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(import.meta.dirname, 'http-load.ts')], {
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk
    })
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(output) as LoadResult) : reject(new Error(`http-load exited with ${code}`)),
    )
    child.stdin.end(JSON.stringify(spec))
  })
}
