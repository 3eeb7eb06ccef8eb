import { commonSettings, loadConfig, RouteFlags, readinessTimeoutSetting, type Settings } from '@atrium/platform'
import { Type } from 'typebox'
import { checkWebAuthn } from './auth/relying-party.ts'
import { callsSettings, checkCalls } from './calls/calls-settings.ts'
import { checkOAuth, oauthSettings } from './federation/oauth-settings.ts'
import { checkFileStorage, fileSettings } from './files/file-settings.ts'
import { checkMailBridge, mailSettings } from './mail/mail-settings.ts'
import { checkMcp, mcpSettings } from './mcp/mcp-settings.ts'
import { checkWebPush, pushSettings } from './notifications/push-settings.ts'
import { checkSessions, sessionSettings } from './sessions/session-settings.ts'
import { stunSettings } from './stun/stun-settings.ts'
import { webhookSettings } from './webhooks/webhook-settings.ts'

/** A fixed-window request limit: at most `Requests` per window of `WindowSeconds` (0 requests: off). */
function requestWindow(requests: number, windowSeconds: number, scope: string) {
  return Type.Object(
    {
      Requests: Type.Integer({
        default: requests,
        minimum: 0,
        description: `Requests per window of ${scope} (0: off).`,
      }),
      WindowSeconds: Type.Integer({ default: windowSeconds, minimum: 1, description: 'Length of a window.' }),
    },
    { default: {}, additionalProperties: false },
  )
}

/** An origin a frontend may be framed by: scheme, host and port only, nothing a CSP would read as another source. */
const FRAME_ORIGIN = `^https?://[^/?#\\s;,'"*]+$`

/** Every gateway setting; docs/configuration.md is generated from this declaration. */
export const gatewaySettings = Type.Object(
  {
    ...commonSettings({ host: 'localhost', port: 8080 }),
    GatewayDB: Type.String({
      default: 'sqlite:data/gateway.db',
      description: 'Gateway database: `sqlite:<path>` (embedded default) or `postgres://…`.',
    }),
    PublicOrigin: Type.String({
      default: 'http://localhost:8080',
      pattern: '^https?://[^/?#]+$',
      description:
        'Origin users reach this gateway at (scheme, host, port). Links in mail and every return address are built from it, never from request headers.',
    }),
    ...sessionSettings,
    Otp: Type.Object(
      {
        CodeTtlSeconds: Type.Integer({
          default: 600,
          minimum: 60,
          maximum: 3600,
          description: 'A sign-in code or magic link is refused from exactly its creation + CodeTtlSeconds.',
        }),
        MaxAttempts: Type.Integer({
          default: 5,
          minimum: 1,
          maximum: 20,
          description: 'Wrong codes one challenge accepts; the one that reaches the limit ends the challenge.',
        }),
        MaxChallengesPerTargetPerHour: Type.Integer({
          default: 5,
          minimum: 1,
          maximum: 100,
          description: 'Codes sent to one email address or phone number within an hour; more answer RateLimited.',
        }),
        MaxCodesPerClientPerHour: Type.Integer({
          default: 30,
          minimum: 0,
          description:
            'Codes (email and phone, to any addresses) one client IP address (an IPv6 /64) may have sent within an hour, counted across every gateway on this database; more answer RateLimited (0: off).',
        }),
        MaxCodesPerHour: Type.Integer({
          default: 1000,
          minimum: 0,
          description:
            'Codes sent by all clients together within an hour, across every gateway on this database, against mail and SMS floods; more answer RateLimited (0: off).',
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    WebAuthn: Type.Object(
      {
        RpName: Type.String({
          default: 'Atrium',
          minLength: 1,
          maxLength: 64,
          description: 'The name authenticators show for this site when a passkey or security key is made.',
        }),
        RpId: Type.String({
          default: '',
          description:
            'The relying-party id passkeys and security keys are bound to: empty (the default) for the host of PublicOrigin, or a domain that host ends with, e.g. `example.com` for `https://p1.example.com`; then every gateway node whose PublicOrigin lies within it (p1, p2, p3) takes the same keys (docs/gateway.md, "Passkeys and security keys"). Keys made under another id stop working when it changes.',
        }),
        SecurityKeyUserVerification: Type.Union(
          [Type.Literal('required'), Type.Literal('preferred'), Type.Literal('discouraged')],
          {
            default: 'preferred',
            description:
              'Whether a security key (Fido2Key) must verify its user (PIN or biometrics) to register and sign in; passkeys always must.',
          },
        ),
      },
      { default: {}, additionalProperties: false },
    ),
    Audit: Type.Object(
      {
        DefaultLimit: Type.Integer({
          default: 100,
          minimum: 1,
          maximum: 1000,
          description: 'Rows of GET /auth/v1/audit when limit is not given.',
        }),
        MaxLimit: Type.Integer({
          default: 1000,
          minimum: 1,
          maximum: 10_000,
          description: 'Largest accepted limit of GET /auth/v1/audit.',
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    ...fileSettings,
    ...oauthSettings,
    ...mailSettings,
    ...stunSettings,
    ...pushSettings,
    ...mcpSettings,
    ...callsSettings,
    Workers: Type.Integer({
      default: 0,
      minimum: 0,
      maximum: 31,
      description:
        'Gateway processes serving the port together (SO_REUSEPORT); 0 (the default): one per core. `npm start` runs 1. Rate limits, typing and presence are shared by the workers of a node (on a PostgreSQL gateway database, by every gateway process). Worker w writes ids as NodeNumber + w, so space node numbers by Workers.',
    }),
    PushSending: Type.Boolean({
      default: true,
      description: 'Send Web Push and webhooks from this node; enable on exactly one gateway node.',
    }),
    Modules: Type.Record(
      Type.String({ pattern: '^[a-z][a-z0-9-]*$' }),
      Type.Union([
        Type.String({ format: 'uri' }),
        Type.Array(Type.String({ format: 'uri' }), { minItems: 1, uniqueItems: true }),
      ]),
      {
        default: {},
        description:
          'Internal base URL of each module, by module name, e.g. `{"chat": "http://127.0.0.1:8081"}`; a list of URLs (one path, several origins) names instances of one module, which share its database: requests are spread over them and fail over (docs/operations.md).',
      },
    ),
    Readiness: Type.Object(
      {
        TimeoutMs: readinessTimeoutSetting,
        OptionalModules: Type.Array(Type.String(), {
          default: [],
          uniqueItems: true,
          description:
            'Modules whose outage leaves the gateway ready (GET /auth/v1/ready); every other module in Modules is required.',
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    Events: Type.Object(
      {
        HeartbeatSeconds: Type.Integer({
          default: 15,
          minimum: 1,
          maximum: 300,
          description: 'Interval of the comment line an idle SSE stream gets, so proxies keep it open.',
        }),
        ReplayMaxAgeSeconds: Type.Integer({
          default: 86_400,
          minimum: 60,
          description: 'Oldest `since` an SSE reconnect is replayed from; an older one gets `event: resync`.',
        }),
        MaxQueuedEvents: Type.Integer({
          default: 1000,
          minimum: 10,
          maximum: 100_000,
          description: 'Events one SSE subscriber may have waiting; a slower one gets `event: resync` and is closed.',
        }),
        PollWaitMs: Type.Integer({
          default: 25_000,
          minimum: 0,
          maximum: 120_000,
          description: "Long-poll `wait` sent to a module's events endpoint (at most the module's own maximum).",
        }),
        PollTimeoutMs: Type.Integer({
          default: 10_000,
          minimum: 100,
          description: 'Time an events call may take beyond its wait before it counts as failed.',
        }),
        PageLimit: Type.Integer({
          default: 500,
          minimum: 1,
          maximum: 1000,
          description: '`limit` of each events call, live polls and replay pages alike.',
        }),
        ChunkSubjects: Type.Integer({
          default: 200,
          minimum: 1,
          maximum: 600,
          description:
            'Subjects per long-poll; more subscribers open more parallel polls, each with its own cursor. At most 600: the subjects travel in the URL of each poll, which past about 750 exceeds the 16 KiB header limit of Node.js (431).',
        }),
        RetryMinMs: Type.Integer({
          default: 500,
          minimum: 10,
          description: 'First back-off after a failed events call; it doubles (with jitter) up to RetryMaxMs.',
        }),
        RetryMaxMs: Type.Integer({
          default: 30_000,
          minimum: 10,
          description: 'Longest back-off between events calls to a module that is down.',
        }),
        GuestCheckSeconds: Type.Integer({
          default: 30,
          minimum: 1,
          maximum: 3600,
          description:
            "How often a guest's open SSE stream asks the chat module whether its invite still stands; a revoked one's stream is closed.",
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    ...webhookSettings,
    Dns: Type.Object(
      {
        Servers: Type.Array(
          Type.String({
            pattern:
              '^((\\d{1,3}\\.){3}\\d{1,3}(:\\d{1,5})?|\\[[0-9A-Fa-f:.]+\\](:\\d{1,5})?|[0-9A-Fa-f]*:[0-9A-Fa-f:.]*)$',
          }),
          {
            default: [],
            description:
              'DNS servers for project-domain checks and the email bridge (DKIM keys, SPF) as `ip` or `ip:port` (`[ipv6]:port`); empty uses the system resolvers.',
          },
        ),
        TimeoutMs: Type.Integer({
          default: 5000,
          minimum: 100,
          maximum: 60_000,
          description: 'Time one DNS query may take before it is retried or fails.',
        }),
        Tries: Type.Integer({ default: 2, minimum: 1, maximum: 5, description: 'Attempts per DNS server.' }),
        RecheckSeconds: Type.Integer({
          default: 900,
          minimum: 0,
          description: 'Interval of the background re-check of pending project domains; 0 turns it off.',
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    Proxy: Type.Object(
      {
        ConnectTimeoutMs: Type.Integer({
          default: 5_000,
          minimum: 1,
          description: 'Time to open a connection to a module; then the caller gets GatewayTimeout (504).',
        }),
        ResponseTimeoutMs: Type.Integer({
          default: 30_000,
          minimum: 1,
          description: 'Time from sending a request to a module until its response headers arrive; then 504.',
        }),
        BodyTimeoutMs: Type.Integer({
          default: 60_000,
          minimum: 0,
          description: 'Longest pause between two chunks of a module response body before it is cut (0: none).',
        }),
        Connections: Type.Integer({
          default: 128,
          minimum: 1,
          description: 'Keep-alive connections the gateway holds at most to each module origin.',
        }),
        InstanceBackoffMs: Type.Integer({
          default: 1_000,
          minimum: 1,
          description:
            'How long a module instance that refused or dropped a connection is skipped before it is tried again; doubles with each further failure, up to 30 s.',
        }),
        KeepAliveMs: Type.Integer({
          default: 30_000,
          minimum: 1_000,
          description: 'How long an idle pooled connection to a module stays open (the module may ask for less).',
        }),
        TrustedProxies: Type.Array(Type.String({ pattern: '^[0-9A-Fa-f:.]+(/[0-9]{1,3})?$' }), {
          default: [],
          description:
            'IP addresses or CIDR ranges of proxies in front of the gateway whose X-Forwarded-For is believed, for the forwarded headers, the login audit and per-IP rate limits; from anyone else it is replaced.',
        }),
        Project: Type.String({ default: '', description: 'Project name sent to modules in X-Project.' }),
        Routes: Type.Array(
          Type.Object(
            {
              Prefix: Type.String({ description: 'Path prefix, e.g. `/msg/`.' }),
              Upstream: Type.String({ description: 'A module name from `Modules`, or an http(s) base URL.' }),
              Flags: Type.Array(Type.Union(Object.keys(RouteFlags).map((name) => Type.Literal(name))), {
                default: [],
                description: 'RouteFlags by name: `AppAuthAndCORS`, `RequireSession`.',
              }),
            },
            { additionalProperties: false },
          ),
          {
            default: [],
            description:
              'Routes added to the route map at start when their prefix is missing, e.g. `[{"Prefix": "/msg/", "Upstream": "chat", "Flags": ["AppAuthAndCORS"]}]`. An existing prefix is left as the CLI or admin panel set it.',
          },
        ),
        RouteReloadMs: Type.Integer({
          default: 2_000,
          minimum: 100,
          description:
            'Interval at which the route map and app origins are re-read, so CLI changes apply without a restart.',
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    Tls: Type.Object(
      {
        CertFile: Type.String({
          default: '',
          description:
            'PEM certificate chain; with KeyFile the gateway serves HTTPS with HTTP/2 and HTTP/1.1 (ALPN), without both plain HTTP.',
        }),
        KeyFile: Type.String({ default: '', description: 'PEM private key of CertFile.' }),
      },
      { default: {}, additionalProperties: false },
    ),
    Static: Type.Object(
      {
        Apps: Type.Record(Type.String(), Type.String({ minLength: 1 }), {
          default: { '/chat/': 'packages/web/dist/chat' },
          description:
            'Frontends served from memory: mount path -> build directory. A missing directory is logged and skipped.',
        }),
        MaxBytes: Type.Integer({
          default: 256 * 1024 * 1024,
          minimum: 0,
          description: 'Memory for all frontends, original and compressed copies together; more is a startup error.',
        }),
        FrameAncestors: Type.Record(Type.String(), Type.Array(Type.String({ pattern: FRAME_ORIGIN })), {
          default: {},
          description:
            'Origins that may show a frontend in a frame, by mount, e.g. `{"/chat/": ["https://shop.example.com"]}` for a support chat embedded in a site (CSP frame-ancestors). A mount not named here cannot be framed at all.',
        }),
        ContentSecurityPolicy: Type.Record(Type.String(), Type.String({ minLength: 1, pattern: '^[^\\r\\n]*$' }), {
          default: {},
          description: `A frontend's own Content-Security-Policy, by mount, instead of the default (docs/serving.md, "Frontend policies"), e.g. \`{"/admin/": "default-src 'self'; script-src 'self' 'unsafe-inline'"}\`. Without a frame-ancestors directive, the one of FrameAncestors is added.`,
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    RateLimits: Type.Object(
      {
        Connection: requestWindow(1_000, 10, 'one TCP/TLS connection or HTTP/2 session'),
        Session: requestWindow(1_200, 60, 'one session (cookie or bearer token)'),
        ApiKey: requestWindow(6_000, 60, 'one API key'),
        Bandwidth: Type.Object(
          {
            Bytes: Type.Integer({
              default: 1024 * 1024 * 1024,
              minimum: 0,
              description:
                'Request plus response body bytes per window of a session, API key or anonymous IP (0: off).',
            }),
            WindowSeconds: Type.Integer({ default: 60, minimum: 1, description: 'Length of a bandwidth window.' }),
          },
          { default: {}, additionalProperties: false },
        ),
      },
      { default: {}, additionalProperties: false },
    ),
  },
  { additionalProperties: false },
)

export type GatewayConfig = Settings<typeof gatewaySettings>

/**
 * The timetick node number the `atrium` CLI writes with: it shares the gateway database with running
 * gateways, so it must never make the same ids as one of them.
 */
export const CLI_NODE_NUMBER = 31

function checkNodeNumber(config: GatewayConfig): string[] {
  if (config.NodeNumber === CLI_NODE_NUMBER) {
    return [
      `NodeNumber: ${CLI_NODE_NUMBER} is reserved for the atrium CLI; give each gateway node a number from 0 to 30`,
    ]
  }
  // Each worker writes ids with its own node number (server/workers.ts), all below the CLI's.
  return config.Workers > 0 && config.NodeNumber + config.Workers > CLI_NODE_NUMBER
    ? [
        `Workers: ${config.Workers} workers take node numbers ${config.NodeNumber} to ${config.NodeNumber + config.Workers - 1}; all must be below ${CLI_NODE_NUMBER}`,
      ]
    : []
}

// A Record's key pattern becomes patternProperties, which lets a key that fails it through.
const STATIC_MOUNT = /^(\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+\/$/

function checkServing(config: GatewayConfig): string[] {
  const problems = Object.keys(config.Static.Apps)
    .filter((mount) => !STATIC_MOUNT.test(mount) || /^\/(auth|private)\//.test(mount))
    .map(
      (mount) =>
        `Static.Apps: ${JSON.stringify(mount)} is not a mount path like /chat/ (no . or .. segments, not under /auth/ or /private/)`,
    )
  for (const setting of ['FrameAncestors', 'ContentSecurityPolicy'] as const) {
    for (const mount of Object.keys(config.Static[setting])) {
      if (!(mount in config.Static.Apps)) {
        problems.push(`Static.${setting}: ${JSON.stringify(mount)} is not a mount of Static.Apps`)
      }
    }
  }
  if (Boolean(config.Tls.CertFile) !== Boolean(config.Tls.KeyFile)) {
    problems.push('Tls: CertFile and KeyFile are set together (HTTPS) or both left empty (plain HTTP)')
  }
  return problems
}

/** Instances of one module must differ in origin only: a request's path, and its signature, are the same at each. */
function checkModules(config: GatewayConfig): string[] {
  const problems: string[] = []
  for (const [module, setting] of Object.entries(config.Modules)) {
    if (typeof setting === 'string') continue
    const urls = setting.map((url) => new URL(url))
    const path = (url: URL) => url.pathname.replace(/\/+$/, '')
    if (urls.some((url) => path(url) !== path(urls[0]!) || url.search !== '')) {
      problems.push(`Modules.${module}: the instances of a module must have the same path and no query`)
    }
    if (new Set(urls.map((url) => url.origin)).size !== urls.length) {
      problems.push(`Modules.${module}: each instance needs its own origin`)
    }
  }
  return problems
}

/** Loads and validates the gateway's settings from a config-file section and the environment. */
export function loadGatewayConfig(file: unknown, env: Record<string, string | undefined>): GatewayConfig {
  return loadConfig(gatewaySettings, {
    source: 'gateway',
    file,
    env,
    refine: (config) => [
      ...checkSessions(config),
      ...checkWebAuthn(config),
      ...checkWebPush(config),
      ...checkServing(config),
      ...checkNodeNumber(config),
      ...checkFileStorage(config),
      ...checkOAuth(config),
      ...checkMailBridge(config),
      ...checkCalls(config),
      ...checkMcp(config),
      ...checkModules(config),
      ...config.Readiness.OptionalModules.filter((name) => !(name in config.Modules)).map(
        (name) => `Readiness.OptionalModules: ${JSON.stringify(name)} is not in Modules`,
      ),
      ...(config.Events.RetryMinMs > config.Events.RetryMaxMs
        ? ['Events.RetryMinMs: must not exceed Events.RetryMaxMs']
        : []),
      ...(config.Webhooks.BackoffBaseMs > config.Webhooks.BackoffMaxMs
        ? ['Webhooks.BackoffBaseMs: must not exceed Webhooks.BackoffMaxMs']
        : []),
    ],
  })
}
