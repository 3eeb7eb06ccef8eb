/**
 * The client chat configuration of the spec ("Client chat configuration"): the deployment mode,
 * the client contexts, support and feedback settings. It is read at start from `config.json`
 * beside the client's index.html; the mode changes what the client shows, never the server API.
 */

/** Deployment modes (spec: "Deployment modes of the client"). */
export const MODES = ['support', 'feedback', 'full'] as const
export type ClientMode = (typeof MODES)[number]

export const CONTEXTS = ['messenger', 'support', 'feedback', 'calls', 'fileBrowser'] as const
export type ClientContext = (typeof CONTEXTS)[number]

export interface ClientConfig {
  mode: ClientMode
  /** Each client context, as configured; `features` combines them with the mode. */
  contexts: Record<ClientContext, boolean>
  /** Support team CRM ids (as decimal strings) for auto-assign, and the first message of a support chat. */
  support: { teamCrmIds: string[]; welcomeMessage: string }
  /** Allowed FeedbackType values and the rating scale (5: 1–5 stars). */
  feedback: { types: number[]; ratingScale: number }
  /** Bytes per upload request (a tus PATCH); at most the gateway's Files.MaxChunkSize and any proxy's body limit. */
  files: { chunkSize: number }
}

/**
 * What each mode offers at most (spec: Support — private chats, files, notifications; Chat +
 * Feedback — all chats, feedback, notifications; Full — all chats, calls, channels, file browser,
 * feedback). A context is on when the mode offers it and the configuration does not turn it off.
 */
const MODE_OFFERS: Record<ClientMode, Record<ClientContext, boolean>> = {
  support: { messenger: true, support: true, feedback: false, calls: false, fileBrowser: false },
  feedback: { messenger: true, support: false, feedback: true, calls: false, fileBrowser: false },
  full: { messenger: true, support: false, feedback: true, calls: true, fileBrowser: true },
}

/** The configuration used when config.json is missing, and for each of its fields that is invalid. */
export const DEFAULT_CONFIG: ClientConfig = Object.freeze({
  mode: 'full',
  contexts: { messenger: true, support: false, feedback: true, calls: true, fileBrowser: true },
  support: { teamCrmIds: [], welcomeMessage: '' },
  feedback: { types: [1, 2, 3, 4, 5, 6], ratingScale: 5 },
  files: { chunkSize: 5 * 1024 * 1024 },
})

/** Smallest upload chunk: below it, round trips dominate. */
const MIN_CHUNK_SIZE = 64 * 1024

/** The spec's only rating scale: 5 points (1–5). */
const RATING_SCALE = 5
const ID = /^[1-9][0-9]{0,15}$/

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Reads a configuration object. Every field is optional; a wrong field is replaced by its default
 * and reported in `problems`, so a typo never stops the client from starting.
 */
export function parseClientConfig(raw: unknown): { config: ClientConfig; problems: string[] } {
  const problems: string[] = []
  if (!isRecord(raw)) return { config: DEFAULT_CONFIG, problems: ['the configuration is not a JSON object'] }

  let mode = DEFAULT_CONFIG.mode
  if (raw.mode !== undefined) {
    if (MODES.includes(raw.mode as ClientMode)) mode = raw.mode as ClientMode
    else problems.push(`mode: ${JSON.stringify(raw.mode)} is not one of ${MODES.join(', ')}`)
  }

  const contexts = { ...MODE_OFFERS[mode] }
  if (raw.contexts !== undefined && !isRecord(raw.contexts)) problems.push('contexts: not an object')
  const givenContexts = isRecord(raw.contexts) ? raw.contexts : {}
  for (const [name, value] of Object.entries(givenContexts)) {
    if (!CONTEXTS.includes(name as ClientContext)) problems.push(`contexts.${name}: unknown context`)
    else if (typeof value !== 'boolean') problems.push(`contexts.${name}: not a boolean`)
    else contexts[name as ClientContext] = value
  }

  const support = { ...DEFAULT_CONFIG.support }
  const givenSupport = isRecord(raw.support) ? raw.support : {}
  if (raw.support !== undefined && !isRecord(raw.support)) problems.push('support: not an object')
  if (givenSupport.teamCrmIds !== undefined) {
    const ids = Array.isArray(givenSupport.teamCrmIds) ? givenSupport.teamCrmIds.map((id) => String(id)) : []
    if (Array.isArray(givenSupport.teamCrmIds) && ids.every((id) => ID.test(id))) support.teamCrmIds = ids
    else problems.push('support.teamCrmIds: not an array of CRM ids')
  }
  if (givenSupport.welcomeMessage !== undefined) {
    if (typeof givenSupport.welcomeMessage === 'string') support.welcomeMessage = givenSupport.welcomeMessage
    else problems.push('support.welcomeMessage: not a string')
  }

  const feedback = { ...DEFAULT_CONFIG.feedback }
  const givenFeedback = isRecord(raw.feedback) ? raw.feedback : {}
  if (raw.feedback !== undefined && !isRecord(raw.feedback)) problems.push('feedback: not an object')
  if (givenFeedback.types !== undefined) {
    const types = givenFeedback.types
    if (Array.isArray(types) && types.every((type) => Number.isInteger(type) && type > 0)) {
      feedback.types = types as number[]
    } else problems.push('feedback.types: not an array of positive integers')
  }
  if (givenFeedback.ratingScale !== undefined && givenFeedback.ratingScale !== RATING_SCALE) {
    problems.push(`feedback.ratingScale: only ${RATING_SCALE} (1–5 stars) is supported`)
  }

  const files = { ...DEFAULT_CONFIG.files }
  const givenFiles = isRecord(raw.files) ? raw.files : {}
  if (raw.files !== undefined && !isRecord(raw.files)) problems.push('files: not an object')
  if (givenFiles.chunkSize !== undefined) {
    const size = givenFiles.chunkSize
    if (Number.isSafeInteger(size) && (size as number) >= MIN_CHUNK_SIZE) files.chunkSize = size as number
    else problems.push(`files.chunkSize: not a whole number of bytes of at least ${MIN_CHUNK_SIZE}`)
  }

  return { config: { mode, contexts, support, feedback, files }, problems }
}

/** What the client shows, from the mode and the contexts together. */
export interface Features {
  messenger: boolean
  /** Groups and channels in the list, and creating groups (every mode but support). */
  allChats: boolean
  /** Creating info channels (full mode). */
  channels: boolean
  support: boolean
  feedback: boolean
  calls: boolean
  fileBrowser: boolean
}

/** The features of a configuration: a context the mode does not offer stays off whatever `contexts` says. */
export function featuresOf({ mode, contexts }: ClientConfig): Features {
  const offered = MODE_OFFERS[mode]
  const on = (context: ClientContext) => offered[context] && contexts[context]
  return {
    messenger: on('messenger'),
    allChats: mode !== 'support' && on('messenger'),
    channels: mode === 'full' && on('messenger'),
    support: on('support'),
    feedback: on('feedback'),
    calls: on('calls'),
    fileBrowser: on('fileBrowser'),
  }
}

/** How config.json is asked for: revalidated, so an operator's edit shows on the next load. */
export const CONFIG_INIT: RequestInit = { headers: { accept: 'application/json' }, cache: 'no-cache' }

/**
 * Loads `url` (the client's config.json). A missing file means the defaults; a file that is not
 * JSON is a problem reported like a wrong field.
 */
export async function loadClientConfig(
  url: string,
  send: typeof fetch = (...args) => fetch(...args),
): Promise<{ config: ClientConfig; problems: string[] }> {
  let response: Response
  try {
    response = await send(url, CONFIG_INIT)
  } catch {
    return { config: DEFAULT_CONFIG, problems: [`${url} could not be loaded; using the defaults`] }
  }
  if (response.status === 404) return { config: DEFAULT_CONFIG, problems: [] }
  try {
    if (!response.ok) throw new Error(String(response.status))
    return parseClientConfig(await response.json())
  } catch {
    return { config: DEFAULT_CONFIG, problems: [`${url} is not a JSON configuration; using the defaults`] }
  }
}
