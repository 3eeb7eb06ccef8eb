/**
 * MCP overhead (issue 20): `npm exec -- node bench/mcp.ts [--seconds 5] [--rounds 3] [--connections 8]`.
 * The same operation, posting a chat message as a user with an API key, two ways against one
 * gateway and chat module (bench/mcp-servers.ts, one child process, SQLite):
 * - mcp: `tools/call chat_send` on POST /auth/v1/mcp with the SDK's client (each client
 *   initialised once; a call is one HTTP request: a fresh stateless MCP server, the whitelist
 *   check, the module call through the route map with the signed hop, the audit row);
 * - proxy: POST /msg/v1/send_message through the gateway's proxy with the same key.
 * Each runs `--connections` callers in a closed loop for `--seconds`, in interleaved rounds
 * (mcp, proxy, mcp, proxy …) so drift affects both alike. Prints round trips per second, the server
 * process's CPU per call (gateway and chat module together), and the overhead ratio (proxy rate / mcp rate). A measurement: exit 0
 * whatever the figures.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { cpuMicros, firstJsonLine, spawnPinned } from './proxy-processes.ts'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '8' },
  },
})
const SECONDS = Number(values.seconds)
const ROUNDS = Number(values.rounds)
const CONNECTIONS = Number(values.connections)

interface Ready {
  url: string
  key: string
  chatId: string
}

interface Round {
  calls: number
  failures: number
  seconds: number
  cpuMicros: number
}

const dir = mkdtempSync(join(tmpdir(), 'atrium-bench-mcp-'))
const server = spawnPinned('', process.execPath, [new URL('./mcp-servers.ts', import.meta.url).pathname, dir])
try {
  const ready = await firstJsonLine<Ready>(server)
  const headers = { Authorization: `Bearer ${ready.key}` }
  let sent = 0
  const content = () => `bench message ${++sent}`

  const clients = await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      const client = new Client({ name: 'atrium-bench', version: '1.0.0' })
      await client.connect(
        new StreamableHTTPClientTransport(new URL('/auth/v1/mcp', ready.url), { requestInit: { headers } }),
      )
      return client
    }),
  )

  const viaMcp = async (worker: number) => {
    const result = await clients[worker]!.callTool({
      name: 'chat_send',
      arguments: { chat_id: ready.chatId, content: content() },
    })
    return result.isError !== true
  }
  const viaProxy = async () => {
    const response = await fetch(`${ready.url}/msg/v1/send_message`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ chat_id: ready.chatId, content: content() }),
    })
    await response.arrayBuffer()
    return response.status === 200
  }

  /** Runs `call` from every worker in a closed loop for `seconds`. */
  async function measure(call: (worker: number) => Promise<boolean>, seconds: number): Promise<Round> {
    const cpuBefore = cpuMicros([server.pid])
    const started = performance.now()
    const until = started + seconds * 1000
    let calls = 0
    let failures = 0
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, worker) => {
        while (performance.now() < until) {
          if (await call(worker)) calls += 1
          else failures += 1
        }
      }),
    )
    return {
      calls,
      failures,
      seconds: (performance.now() - started) / 1000,
      cpuMicros: cpuMicros([server.pid]) - cpuBefore,
    }
  }

  // Warm-up: both paths, so the JIT and the pools are ready.
  await measure(viaMcp, 1)
  await measure(viaProxy, 1)
  const totals = { mcp: [] as Round[], proxy: [] as Round[] }
  for (let round = 0; round < ROUNDS; round++) {
    totals.mcp.push(await measure(viaMcp, SECONDS))
    totals.proxy.push(await measure(viaProxy, SECONDS))
  }

  const summary = (rounds: Round[]) => {
    const calls = rounds.reduce((sum, round) => sum + round.calls, 0)
    const seconds = rounds.reduce((sum, round) => sum + round.seconds, 0)
    const cpu = rounds.reduce((sum, round) => sum + round.cpuMicros, 0)
    const failures = rounds.reduce((sum, round) => sum + round.failures, 0)
    return { perSecond: calls / seconds, cpuMicrosPerCall: cpu / Math.max(calls, 1), failures, calls }
  }
  const mcp = summary(totals.mcp)
  const proxy = summary(totals.proxy)
  const line = (name: string, figures: ReturnType<typeof summary>) =>
    `${name.padEnd(6)} ${figures.perSecond.toFixed(0).padStart(7)} calls/s  ${(figures.cpuMicrosPerCall / 1000).toFixed(2).padStart(6)} ms server CPU/call  (${figures.calls} calls, ${figures.failures} failed)`
  console.log(`chat_send, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s each way`)
  console.log(line('mcp', mcp))
  console.log(line('proxy', proxy))
  console.log(
    `overhead: MCP takes ${(proxy.perSecond / mcp.perSecond).toFixed(2)}× the time per call of the proxy, ${(mcp.cpuMicrosPerCall / proxy.cpuMicrosPerCall).toFixed(2)}× its server CPU`,
  )
  await Promise.all(clients.map((client) => client.close()))
} finally {
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
}
