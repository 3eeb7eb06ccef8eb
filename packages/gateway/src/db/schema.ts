/**
 * The gateway database tables as Kysely sees them. Every column is NOT NULL with a default (spec:
 * no NULL fields); ids are timeticks, times are epoch milliseconds, booleans are 0/1 integers.
 * Secrets (session tokens, codes, app secrets, API keys) are stored only as SHA-256 hashes; the one
 * exception is an app's webhook signing secret, which the gateway needs as is to sign with.
 */

/** A person who signed in at least once; the CRM id is the identity modules see in X-Crm. */
export interface UsersTable {
  crm_id: number
  name: string
  /** Scopes, space-separated, forwarded in X-Scopes. */
  scopes: string
  created: number
  timetick_update: number
}

/** A phone number or email address of a user (ContactFlags: Verified, ManuallyAdded). */
export interface ContactsTable {
  id: number
  crm_id: number
  /** ContactKind. */
  kind: number
  /** Normalised: lower-case email, E.164 phone. Unique per kind. */
  value: string
  flags: number
  created: number
}

/** A browser session, local to this gateway instance. */
export interface SessionsTable {
  /** SHA-256 (hex) of the cookie token; the token itself is never stored. */
  id: string
  /** The signed-in user; 0 for an app session (AppLogin). */
  crm_id: number
  /** The app of an AppLogin session, 0 for a user session. */
  app_id: number
  /** Sign-in method that created the session, e.g. `email_otp`, `app_login`. */
  method: string
  created: number
  last_seen: number
  /** Token the client echoes in X-CSRF-Token on cookie-authenticated state-changing requests. */
  csrf: string
  ip: string
  user_agent: string
}

/** A pending OTP or magic link: single use, limited attempts, short-lived. */
export interface LoginChallengesTable {
  id: number
  /** `email_otp`, `phone_otp` or `magic_link`. */
  kind: string
  /** Normalised email or phone the code was sent to. */
  target: string
  /** SHA-256 (hex) of the code or link token. */
  secret_hash: string
  attempts: number
  expires: number
  /** 1 once used (successfully) or exhausted. */
  consumed: number
  created: number
  /** Path to return to after sign-in, already validated as same-origin. */
  return_to: string
  /** The client address the code was requested from, as budgeted (auth/client-key.ts). */
  client: string
  device_guid: string
}

/** An application: signs in with its id and secret (AppLogin), owns webhooks and CORS origins. */
export interface AppsTable {
  id: number
  name: string
  /** CRM id of the user who owns the app; its events reach app: subjects of owners. */
  owner: number
  secret_hash: string
  /** AppFlag bits. */
  flags: number
  /** Webhook URL; empty for none. */
  callback_url: string
  /** JSON array of origins allowed to call cross-origin, e.g. `["https://shop.example"]`. */
  origins: string
  /** JSON array of event types sent to the webhook; empty array for none. */
  event_types: string
  created: number
  timetick_update: number
  /**
   * Key of the webhook X-Signature (HMAC-SHA256), `whsec_…`. Kept as is, not hashed, because the
   * gateway signs with it; it only lets its holder forge webhooks to this app, never sign in.
   */
  webhook_secret: string
}

/** A user or service API key. The caller presents `atr_<prefix>_<secret>`; only the hash is kept. */
export interface ApiKeysTable {
  id: number
  /** Public part of the key, unique, shown in lists. */
  prefix: string
  secret_hash: string
  /** `user` (acts as crm_id) or `service` (acts as the app). */
  key_type: string
  crm_id: number
  app_id: number
  scopes: string
  name: string
  created: number
  last_used: number
  /** Time of revocation, 0 while active. */
  revoked: number
}

/** One sign-in attempt, successful or not (spec: "Platform rules", login audit log). */
export interface LoginAuditTable {
  id: number
  /** The user, when known (0 for an unknown address or an app login). */
  crm_id: number
  /** The app of an app login, 0 otherwise. */
  app_id: number
  method: string
  success: number
  /** Why it failed, empty on success. */
  reason: string
  ip: string
  country: string
  user_agent: string
  screen: string
  device_guid: string
  timezone: string
  language: string
  created: number
}

/** A route_map row: requests whose path starts with `prefix` go to `upstream`. */
export interface RoutesTable {
  id: number
  prefix: string
  /** Module name from the Modules setting, or an absolute http(s) base URL. */
  upstream: string
  /** RouteFlags bits. */
  flags: number
  created: number
  timetick_update: number
}

/** A project domain and its DNS ownership check (spec: "States and transitions"). */
export interface ProjectDomainsTable {
  id: number
  domain: string
  /** Value the owner publishes in a TXT record. */
  token: string
  /** `pending_verification` or `verified`. */
  state: string
  created: number
  checked: number
  verified: number
  last_error: string
}

/** Where the events poller stands in a module's feed (the `since` of its next call). */
export interface EventCursorsTable {
  /** Module name from the Modules setting. */
  module: string
  /** TickUpdate up to which every polled subject's events were handed to the hub. */
  tick: number
  updated: number
}

/** Where an app's webhooks stand in a module's feed: events after `tick` are not yet read. */
export interface WebhookCursorsTable {
  app_id: number
  module: string
  tick: number
  updated: number
}

/** One webhook delivery: `pending` while it is being tried, `dead` after its last attempt failed. */
export interface WebhookDeliveriesTable {
  /** The delivery id (X-Delivery-Id), the same for every attempt. */
  id: number
  app_id: number
  module: string
  first_tick: number
  last_tick: number
  event_count: number
  /** The exact payload bytes that are signed and sent (UTF-8 JSON). */
  body: string
  /** `pending` or `dead`; a delivered row is deleted. */
  state: string
  attempts: number
  /** When the next attempt is due, epoch ms. */
  next_attempt: number
  /** HTTP status of the last attempt, 0 when there was no answer. */
  last_status: number
  /** Why the last attempt failed, empty before the first. */
  last_error: string
  created: number
  updated: number
}

/** A browser Web Push subscription (the browser's PushSubscription), one per endpoint. */
export interface PushSubscriptionsTable {
  id: number
  /** The user pushes for whom go to this browser. */
  crm_id: number
  /** The push service URL of the browser; unique. */
  endpoint: string
  /** The browser's P-256 public key (base64url) the payload is encrypted to (RFC 8291). */
  p256dh: string
  /** The browser's 16-byte authentication secret (base64url). */
  auth: string
  user_agent: string
  created: number
  /** When a push was last accepted by the push service, 0 for never. */
  last_success: number
  /** Pushes that failed since the last accepted one. */
  failures: number
  /** Why the last push failed, empty when it was accepted. */
  last_error: string
}

/** A resumable upload (tus, docs/files.md); its bytes live in the file storage under `storage_key`. */
export interface UploadsTable {
  /** The upload id, in its URL. */
  id: number
  /** The user who uploads; only they may see, continue or end the upload. */
  crm_id: number
  /** Total size in bytes, declared at creation (Upload-Length). */
  upload_length: number
  /** Bytes received and verified so far; the storage holds exactly these. */
  upload_offset: number
  /** The Upload-Metadata header as given at creation. */
  metadata: string
  /** From the metadata's `filename` (or `name`), empty when not given. */
  file_name: string
  /** From the metadata's `filetype` (or `type`), lower-case, empty when not given. */
  content_type: string
  /** Where the storage keeps the bytes. */
  storage_key: string
  /**
   * `uploading` until the last byte is verified, then `finished` (a file, not yet known to be on a
   * message), then `attached` once the chat module named it on a message.
   */
  state: string
  /** Epoch ms: an unfinished upload is swept from then, a finished one unless attached; 0 when attached. */
  expires: number
  created: number
  updated: number
}

/** An Ed25519 public key a user registered for UserKey sign-in (docs/gateway.md, "UserKey"). */
export interface UserKeysTable {
  id: number
  crm_id: number
  name: string
  /** The raw 32-byte key, base64url; unique, so one key signs in one user only. */
  public_key: string
  created: number
  /** Epoch ms of the last sign-in with the key; 0 when never used. */
  last_used: number
}

/** A challenge for one UserKey sign-in: single use, short-lived. */
export interface UserKeyChallengesTable {
  id: number
  /** The key asked for; 0 when the presented key is not registered (the challenge then never succeeds). */
  key_id: number
  /** SHA-256 of the challenge's random nonce, hex. */
  nonce_hash: string
  expires: number
  consumed: number
}

/** A WebAuthn credential: a passkey or a security key (docs/gateway.md, "Passkeys and security keys"). */
export interface WebauthnCredentialsTable {
  id: number
  crm_id: number
  /** The authenticator's credential id, base64url; unique. */
  credential_id: string
  /** The COSE public key, base64url. */
  public_key: string
  /** The signature counter last seen; a sign-in must show a larger one unless both are 0. */
  counter: number
  /** Transports the authenticator named, comma-separated (`internal,hybrid`). */
  transports: string
  /** `passkey` (discoverable, user verification required) or `security_key` (Fido2Key). */
  kind: string
  /** `singleDevice` or `multiDevice` (backup eligible), fixed at registration. */
  device_type: string
  /** 1 when the authenticator last said the credential is backed up (synced). */
  backed_up: number
  name: string
  created: number
  last_used: number
}

/** A WebAuthn challenge: single use, short-lived, for a registration (of a user) or a sign-in. */
export interface WebauthnChallengesTable {
  id: number
  /** The registering user; for a sign-in, the user named by the email given, else 0. */
  crm_id: number
  /** `register` or `authenticate`. */
  purpose: string
  /** The credential kind being registered; '' for a sign-in. */
  kind: string
  /** The challenge sent to the browser, base64url. */
  challenge: string
  expires: number
  consumed: number
}

/** An account at an OAuth provider or partner a user signs in with (docs/gateway.md, "OAuth"). */
export interface FederatedIdentitiesTable {
  id: number
  crm_id: number
  /** The provider's id in the catalogue: `google`, `github`, `oidc`, `telegram`, a partner's slug. */
  provider: string
  /** The provider's stable id of the account (`sub`, GitHub's numeric id, Telegram's user id); unique per provider. */
  subject: string
  /** The verified email the provider gave at the first sign-in; '' when none. */
  email: string
  created: number
  last_used: number
}

/** A partner identity provider added at run time (Federation v2, `atrium partner add`). */
export interface FederationPartnersTable {
  id: number
  /** The id in the catalogue and in /federated/start?provider=; unique. */
  slug: string
  name: string
  logo_url: string
  /** The OpenID issuer URL; its discovery document names the endpoints. */
  issuer: string
  client_id: string
  client_secret: string
  /** Space-separated scopes asked for. */
  scopes: string
  created: number
}

/** An OAuth flow under way: single use, short-lived, found by the SHA-256 of its state. */
export interface FederatedFlowsTable {
  id: number
  state_hash: string
  provider: string
  /** The PKCE code verifier, sent with the code to the token endpoint. */
  code_verifier: string
  /** The OpenID nonce the ID token must carry; '' for providers without ID tokens (GitHub). */
  nonce: string
  /** The validated path to go to after sign-in. */
  return_to: string
  expires: number
  consumed: number
}

/** One client's account of its ICE gathering (POST /auth/v1/stun/report); `report` is its JSON. */
export interface StunReportsTable {
  id: number
  crm_id: number
  ip: string
  user_agent: string
  report: string
  created: number
}

/**
 * A tool of the MCP endpoint granted to a subject (`user` CRM id, `app` id or `key` id). For
 * `wallet_send`, `currency` narrows the grant to one currency ('' for any) and `per_call` /
 * `per_day` cap its amounts in hundredths (0: no cap).
 */
export interface McpGrantsTable {
  id: number
  subject_kind: string
  subject_id: number
  tool: string
  currency: string
  per_call: number
  per_day: number
  created: number
}

/** What `wallet_send` moved through MCP for one limited subject, currency and UTC day, in hundredths. */
export interface McpSpendTable {
  subject_kind: string
  subject_id: number
  currency: string
  /** `YYYY-MM-DD`, UTC. */
  day: string
  spent: number
}

/** A `wallet_send` by idempotency key (one per user and key), with the counters it added to. */
export interface McpSendsTable {
  id: number
  crm_id: number
  idempotency_key: string
  /** SHA-256 (hex) of the send's arguments: the same key with other arguments is refused. */
  args_digest: string
  currency: string
  amount: number
  day: string
  /** JSON array of the `mcp_spend` subjects (`kind:id`) the amount was added to. */
  counted: string
  created: number
}

/** One tools/call on the MCP endpoint, allowed or refused; arguments only as a digest. */
export interface McpAuditTable {
  id: number
  created: number
  crm_id: number
  app_id: number
  key_id: number
  key_type: string
  tool: string
  args_digest: string
  /** `ok`, `refused` (whitelist or limit), `invalid` (arguments), `error` (the module or the network). */
  outcome: string
  error_code: number
  duration_ms: number
}

/** One operator action in the panel (/ProxyAdmin/): who, when, what, on what, and how it ended. */
export interface AdminActionsTable {
  id: number
  /** The operator. */
  crm_id: number
  /** What was done, e.g. `session.revoke`, `route.save`. */
  action: string
  /** What it was done to, e.g. a user's CRM id or a route prefix. */
  target: string
  /** The action's inputs worth keeping (never a secret). */
  detail: string
  /** `ok`, or why it failed. */
  outcome: string
  at: number
}

export interface GatewayDatabase {
  users: UsersTable
  contacts: ContactsTable
  sessions: SessionsTable
  login_challenges: LoginChallengesTable
  apps: AppsTable
  api_keys: ApiKeysTable
  login_audit: LoginAuditTable
  routes: RoutesTable
  project_domains: ProjectDomainsTable
  event_cursors: EventCursorsTable
  push_subscriptions: PushSubscriptionsTable
  webhook_cursors: WebhookCursorsTable
  webhook_deliveries: WebhookDeliveriesTable
  uploads: UploadsTable
  user_keys: UserKeysTable
  user_key_challenges: UserKeyChallengesTable
  webauthn_credentials: WebauthnCredentialsTable
  webauthn_challenges: WebauthnChallengesTable
  federated_identities: FederatedIdentitiesTable
  federation_partners: FederationPartnersTable
  federated_flows: FederatedFlowsTable
  stun_reports: StunReportsTable
  mcp_grants: McpGrantsTable
  mcp_spend: McpSpendTable
  mcp_sends: McpSendsTable
  mcp_audit: McpAuditTable
  admin_actions: AdminActionsTable
}
