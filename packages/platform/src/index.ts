export { startBackgroundSweep } from './background-sweep.ts'
export { type BuildInfo, buildInfo } from './build-info.ts'
export {
  ConfigError,
  commonSettings,
  describeSettings,
  type LoadConfigOptions,
  loadConfig,
  readConfigSection,
  type SettingDescription,
  type Settings,
} from './config.ts'
export * from './database/index.ts'
export { createHostCheck, type DomainGuardOptions, installDomainGuard } from './domain-guard.ts'
export {
  Envelope,
  type ErrorEnvelope,
  ErrorEnvelopeSchema,
  errorEnvelope,
  installEnvelope,
  sendError,
} from './envelope.ts'
export { ApiError, type ErrorDefinition, type ErrorName, errorCodes, renderErrorTable } from './errors.ts'
export {
  type BroadcastEvent,
  type EventBatch,
  type EventBatchItem,
  EventBatchSchema,
  type EventsQueryLimits,
  eventsQuerySchema,
  moduleEventsSettings,
  parseEventBatch,
  parseSubject,
  querySubjects,
  type Subject,
  type SubjectKind,
  subjectOf,
  toBroadcastEvent,
  toWebhookEvent,
  type WebhookEvent,
  type WebhookPayload,
} from './events.ts'
export {
  FILE_TOKEN_HEADER,
  type FileClaim,
  type FileTokenProblem,
  signFileToken,
  verifyFileToken,
} from './file-token.ts'
export * from './flags.ts'
export {
  type FrontDoor,
  type FrontHandler,
  FrontReply,
  FrontRequest,
  type FrontSendHook,
  type ReplyView,
  type RequestView,
} from './front-door.ts'
export {
  fingerprintOf,
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_KEY_PATTERN,
  isUniqueViolation,
  keyCutoff,
  markReplayed,
  REPLAYED_HEADER,
  readIdempotencyKey,
  requireSameRequest,
} from './idempotency.ts'
export {
  DEVICE_GUID_PATTERN,
  type Hop,
  IDENTITY_HEADERS,
  type Identity,
  installServiceAuth,
  readIdentity,
  SERVICE_AUTH_HEADER,
  SERVICE_SECRET_MIN_LENGTH,
  type ServiceAuthOptions,
  signedHeaders,
  signHop,
  verifyHop,
} from './identity.ts'
export { createPrettyLogStream } from './log-format.ts'
export {
  installMetrics,
  type MetricsListenerSettings,
  type MetricsOptions,
  metricsSettings,
  type ServiceMetrics,
} from './metrics.ts'
export { installOpenApi, type OpenApiOptions } from './openapi.ts'
export { applyPatch, isEmptyPatch, type Patch, patchOf } from './patch.ts'
export { DISPLAY_NAME_MAX, DISPLAY_NAME_PATTERN, shownName } from './people.ts'
export {
  databaseCheck,
  installReadiness,
  type ReadinessCheck,
  type ReadinessOptions,
  readinessTimeoutSetting,
} from './readiness.ts'
export { compareVersions, isSemanticVersion, type PackageVersions, processVersion } from './releases/versions.ts'
export { currentRequestId } from './request-context.ts'
export {
  type Authority,
  parseAuthority,
  parseRequestTarget,
  type RequestTarget,
  requestHost,
} from './request-target.ts'
export {
  buildLabel,
  createService,
  exitOnStartupError,
  runProcess,
  type ServeOptions,
  type Service,
  type ServiceOptions,
  serve,
  type TlsOptions,
} from './service.ts'
export { REFUSED_CONTROL } from './text.ts'
export * from './timetick.ts'
export { drainUnreadBody, UNREAD_BODY_DRAIN_MS } from './unread-body.ts'
export { compileQueryCheck } from './validation.ts'
