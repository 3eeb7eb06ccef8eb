import { isIP } from 'node:net'
import { ApiError, type Service } from '@atrium/platform'
import type { FastifyRequest } from 'fastify'
import { type Static, Type } from 'typebox'
import { createFixedWindow } from '../rate-limit/fixed-window.ts'
import { canonicalAddress } from './stun-message.ts'
import type { StunReportRow, StunReports } from './stun-reports.repository.ts'
import type { StunResponder } from './stun-responder.ts'

export interface StunPluginOptions {
  responder: StunResponder
  reports: StunReports
  /** Whether the responder is configured on (Stun.Enabled). */
  enabled: boolean
  reportsPerHour: number
  now: () => number
}

/** Largest report body in bytes; a full gathering of 32 candidates with errors is about 6 KiB. */
export const REPORT_BODY_LIMIT = 16 * 1024
const MAX_USER_AGENT = 256

// Text a person controls: no control characters (NUL above all, which PostgreSQL refuses).
const PLAIN = '^[^\\u0000-\\u001f\\u007f]*$'
const Address = Type.String({
  maxLength: 253,
  pattern: '^[0-9A-Za-z.:%_-]+$',
  description: 'An IPv4 or IPv6 address, or the mDNS name (`….local`) a browser shows instead of a host address.',
})
const Port = Type.Integer({ minimum: 0, maximum: 65535 })
const IceUrl = Type.String({
  maxLength: 256,
  pattern: '^(stun|stuns|turn|turns):[^\\s\\u0000-\\u001f\\u007f]+$',
  description: 'The ICE server the candidate or error came from, as configured (`stun:host:port`).',
})

const Candidate = Type.Object(
  {
    type: Type.Union([Type.Literal('host'), Type.Literal('srflx'), Type.Literal('prflx'), Type.Literal('relay')]),
    protocol: Type.Union([Type.Literal('udp'), Type.Literal('tcp')]),
    address: Type.Optional(Address),
    port: Type.Optional(Port),
    relatedAddress: Type.Optional(Address),
    relatedPort: Type.Optional(Port),
    url: Type.Optional(IceUrl),
  },
  { additionalProperties: false },
)

const ReportBody = Type.Object(
  {
    candidates: Type.Array(Candidate, {
      maxItems: 32,
      description: 'The candidates ICE gathered (RTCIceCandidate fields), in the order they came.',
    }),
    mappedAddress: Type.Optional(
      Type.Object(
        { address: Address, port: Port },
        {
          additionalProperties: false,
          description: "The server-reflexive address this gateway's STUN responder gave the client.",
        },
      ),
    ),
    gatheringMs: Type.Integer({
      minimum: 0,
      maximum: 600_000,
      description: 'Milliseconds from creating the offer to gathering complete.',
    }),
    stunRttMs: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 60_000,
        description: 'Milliseconds until the first server-reflexive candidate arrived.',
      }),
    ),
    errors: Type.Optional(
      Type.Array(
        Type.Object(
          {
            url: IceUrl,
            code: Type.Integer({ minimum: 0, maximum: 999, description: 'The STUN error code, or 701 (no answer).' }),
            text: Type.String({ maxLength: 200, pattern: PLAIN }),
          },
          { additionalProperties: false },
        ),
        { maxItems: 16, description: 'icecandidateerror events during gathering.' },
      ),
    ),
  },
  { additionalProperties: false },
)
type Report = Static<typeof ReportBody>

const ReportView = Type.Object({
  id: Type.String(),
  at: Type.Integer({ description: 'Epoch ms the gateway stored it.' }),
  ip: Type.String({ description: 'The address the report came from over HTTP(S).' }),
  userAgent: Type.String(),
  report: ReportBody,
})

const Binding = Type.Object({
  family: Type.Union([Type.Literal('IPv4'), Type.Literal('IPv6')]),
  address: Type.String(),
  port: Port,
  at: Type.Integer({ description: 'Epoch ms the request arrived.' }),
  outcome: Type.Union([Type.Literal('answered'), Type.Literal('unknownAttributes')], {
    description: '`answered` with XOR-MAPPED-ADDRESS, or refused with 420 Unknown Attribute.',
  }),
})

const report = {
  body: ReportBody,
  response: { 200: Type.Object({ report: ReportView }) },
}
const current = {
  response: {
    200: Type.Object({
      address: Type.String({ description: 'Your IP address as this gateway sees it over HTTP(S).' }),
      stun: Type.Object({
        enabled: Type.Boolean(),
        listening: Type.Boolean({ description: 'Whether the UDP socket is bound (it may have failed to).' }),
        port: Type.Integer({ description: 'The UDP port Binding requests go to; 0 when not listening.' }),
      }),
      bindings: Type.Array(Binding, {
        description: 'The last Binding requests this gateway answered from your IP address, newest first.',
      }),
      report: Type.Union([ReportView, Type.Null()], { description: 'Your newest report, or null.' }),
    }),
  },
}

function toReportView(row: StunReportRow) {
  return {
    id: String(row.id),
    at: row.created,
    ip: row.ip,
    userAgent: row.user_agent,
    report: JSON.parse(row.report) as Report,
  }
}

/** An address field holds an IP address or a browser's mDNS name; anything else is refused. */
function checkAddress(address: string | undefined, field: string) {
  if (address === undefined || isIP(address) !== 0 || /^[0-9A-Za-z-]{1,63}\.local$/.test(address)) return
  throw new ApiError('InvalidRequest', `${field} is not an IP address or an mDNS .local name.`)
}

function checkReport(body: Report) {
  body.candidates.forEach((candidate, i) => {
    checkAddress(candidate.address, `candidates[${i}].address`)
    checkAddress(candidate.relatedAddress, `candidates[${i}].relatedAddress`)
  })
  if (body.mappedAddress && isIP(body.mappedAddress.address) === 0) {
    throw new ApiError('InvalidRequest', 'mappedAddress.address is not an IP address.')
  }
}

/** The text without control characters (a header may carry a tab; NUL never reaches the database). */
function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  return text.replace(/[\u0000-\u001f\u007f]/g, '')
}

// Before the schema, so that an anonymous caller is told to sign in rather than what is missing.
async function requirePerson(request: FastifyRequest): Promise<void> {
  if (request.caller.crmId === 0) throw new ApiError('SessionRequired', 'STUN diagnostics need a signed-in person.')
}

/**
 * STUN diagnostics (spec: "Endpoints", /auth/v1/stun/report and /auth/v1/stun/current; docs/stun.md):
 * a signed-in client reports what ICE gathered, and reads back what this gateway's STUN responder
 * saw from its address together with its newest report.
 */
export default async function stunPlugin(
  app: Service,
  { responder, reports, enabled, reportsPerHour, now }: StunPluginOptions,
) {
  const perUser = createFixedWindow<number>(reportsPerHour, 3600, now)

  app.post(
    '/stun/report',
    { schema: report, onRequest: requirePerson, bodyLimit: REPORT_BODY_LIMIT },
    async (request, reply) => {
      const { crmId } = request.caller
      checkReport(request.body)
      const wait = perUser.take(crmId)
      if (wait > 0) {
        reply.header('retry-after', String(wait))
        throw new ApiError('RateLimited', `At most ${reportsPerHour} STUN reports an hour; retry in ${wait} s.`)
      }
      const row = await reports.add({
        crmId,
        ip: canonicalAddress(request.ip, 0).address,
        userAgent: printable(String(request.headers['user-agent'] ?? '')).slice(0, MAX_USER_AGENT),
        report: JSON.stringify(request.body),
      })
      return { report: toReportView(row) }
    },
  )

  app.get('/stun/current', { schema: current, onRequest: requirePerson }, async (request) => {
    const address = canonicalAddress(request.ip, 0).address
    const bound = responder.addresses()
    const latest = await reports.latest(request.caller.crmId)
    return {
      address,
      stun: { enabled, listening: bound.length > 0, port: bound[0]?.port ?? 0 },
      bindings: responder.bindingsFrom(address),
      report: latest ? toReportView(latest) : null,
    }
  })
}
