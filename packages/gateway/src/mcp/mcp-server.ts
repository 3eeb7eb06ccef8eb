import { performance } from 'node:perf_hooks'
import { ApiError, errorCodes } from '@atrium/platform'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js'
import type { FastifyRequest } from 'fastify'
import { Compile, type Validator } from 'typebox/compile'
import type { ModuleCaller } from '../proxy/module-call.ts'
import { type McpGrants, subjectsOf } from './grants.repository.ts'
import type { McpAudit, McpOutcome } from './mcp-audit.repository.ts'
import { CONTROL_FREE } from './tool-schemas.ts'
import { digestOf, type McpTool, TOOLS, ToolFailure } from './tools.ts'

export interface McpServerOptions {
  grants: McpGrants
  audit: McpAudit
  modules: ModuleCaller
  version: string
}

/** Refusals by the whitelist: audited as `refused`, the rest of the failures as `error`. */
const REFUSALS = new Set<number>([
  errorCodes.McpToolNotAllowed.code,
  errorCodes.McpPerCallLimit.code,
  errorCodes.McpPerDayLimit.code,
  errorCodes.McpIdempotencyConflict.code,
])

const INSTRUCTIONS =
  'Tools of an Atrium gateway, acting as the signed-in user (or the app of a service key): their wallet, their chats and CRM profiles. Only the tools the operator granted to this user, app or key are listed. Ids are strings of digits. wallet_send moves real money: confirm with the user first and give each transfer a new idempotency_key.'

/** A tool as tools/list shows it: plain JSON Schemas (TypeBox's are JSON Schema already). */
function listed(tool: McpTool) {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: JSON.parse(JSON.stringify(tool.input)),
    outputSchema: JSON.parse(JSON.stringify(tool.output)),
  }
}

const compiled = new Map<string, Validator>(TOOLS.map((tool) => [tool.name, Compile(tool.input)]))
const byName = new Map<string, McpTool>(TOOLS.map((tool) => [tool.name, tool]))

/** Why arguments do not fit a tool's input schema, one line per problem; empty when they do. */
function argumentProblems(tool: McpTool, args: unknown): string[] {
  const validator = compiled.get(tool.name)
  if (!validator || validator.Check(args)) return []
  const problems = [...validator.Errors(args)]
    .filter((error) => error.keyword !== 'boolean')
    .map((error) => {
      const at = error.instancePath ? error.instancePath.slice(1).replaceAll('/', '.') : 'arguments'
      if (error.keyword === 'additionalProperties') {
        const names = (error.params as { additionalProperties?: string[] }).additionalProperties ?? []
        return `unknown argument ${names.join(', ')}`
      }
      if (error.keyword === 'pattern' && (error.params as { pattern?: string }).pattern === CONTROL_FREE) {
        return `${at} holds a control character (U+0000–U+001F other than tab, line feed and carriage return are refused)`
      }
      return `${at} ${error.message}`
    })
  return problems.length > 0 ? problems : ['arguments do not match the input schema']
}

/** A tool result that reports a failure to the assistant, with the error code and message. */
function failureResult(failure: ToolFailure) {
  return {
    content: [
      { type: 'text' as const, text: JSON.stringify({ error: { code: failure.code, message: failure.message } }) },
    ],
    isError: true,
  }
}

/**
 * Builds the MCP server for one HTTP request (stateless: no MCP session, so any gateway answers
 * any request). It lists only the tools granted to the caller's user, app or key, and runs a
 * tools/call through the whitelist, the tool's input schema and the module, auditing each call.
 */
export function createMcpServer(options: McpServerOptions, request: FastifyRequest): Server {
  const { grants, audit } = options
  const caller = request.caller
  const subjects = subjectsOf(caller)
  const server = new Server(
    { name: 'atrium-gateway', title: 'Atrium', version: options.version },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  )

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const allowed = await grants.toolsOf(subjects)
    return { tools: TOOLS.filter((tool) => allowed.has(tool.name)).map(listed) }
  })

  server.setRequestHandler(CallToolRequestSchema, async (call) => {
    const started = performance.now()
    const name = call.params.name
    const args = call.params.arguments ?? {}
    const record = (outcome: McpOutcome, errorCode: number) =>
      audit.record({
        crmId: caller.crmId,
        appId: caller.appId,
        keyId: caller.apiKeyId,
        keyType: caller.keyType,
        tool: name,
        argsDigest: digestOf(args),
        outcome,
        errorCode,
        durationMs: performance.now() - started,
      })

    const tool = byName.get(name)
    if (!tool) {
      await record('invalid', errorCodes.InvalidRequest.code)
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${JSON.stringify(name.slice(0, 64))}`)
    }
    if (!(await grants.toolsOf(subjects)).has(name)) {
      await record('refused', errorCodes.McpToolNotAllowed.code)
      return failureResult(
        ToolFailure.from(
          new ApiError(
            'McpToolNotAllowed',
            `${name} is not allowed for this caller: an operator grants it with atrium mcp allow`,
          ),
        ),
      )
    }
    const problems = argumentProblems(tool, args)
    if (problems.length > 0) {
      await record('invalid', errorCodes.InvalidRequest.code)
      throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for ${name}: ${problems.join('; ')}`)
    }
    try {
      const result = await tool.invoke(args, {
        crmId: caller.crmId,
        subjects,
        grants,
        callModule: (moduleCall) => options.modules.callModule(request, caller, moduleCall),
      })
      await record('ok', 0)
      return { content: [{ type: 'text' as const, text: JSON.stringify(result) }], structuredContent: result }
    } catch (error) {
      if (!(error instanceof ToolFailure || error instanceof ApiError)) throw error
      const failure = error instanceof ToolFailure ? error : ToolFailure.from(error)
      await record(REFUSALS.has(failure.code) ? 'refused' : 'error', failure.code)
      return failureResult(failure)
    }
  })

  return server
}
