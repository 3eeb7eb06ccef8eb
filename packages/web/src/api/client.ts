import { randomGuid } from './device.ts'
import { isFailure, RequestError, readEnvelope } from './envelope.ts'
import { apiHeaders } from './request-headers.ts'

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'

/** Failures after which an operation sent with an Idempotency-Key is sent again: no answer, or the module failed or was going away. */
const REPEATED_AFTER: ReadonlySet<string> = new Set([
  'Network',
  'BadResponse',
  'BadGateway',
  'GatewayTimeout',
  'ShuttingDown',
])
/** Pauses before the repeats of `postOnce`, in ms. */
const REPEAT_PAUSES_MS = [250, 1000]

/** Query parameters of a GET; undefined values are left out. */
export type Query = Record<string, string | number | boolean | undefined>

export interface ApiClientOptions {
  /** Origin the API is on; '' (default) for the page's own origin, as when the gateway serves the client. */
  base?: string
  /** This device's GUID, sent as X-Device-Guid on every request. */
  deviceGuid: string
  fetch?: typeof fetch
}

/**
 * The client of the gateway's API for the browser: the session cookie travels by itself
 * (credentials: same-origin), every request names the device in X-Device-Guid, and every POST
 * carries the session's CSRF token in X-CSRF-Token, as the gateway requires for cookie-authenticated
 * state changes. Answers are read from the envelope; failures throw RequestError.
 */
export function createApiClient({
  base = '',
  deviceGuid,
  fetch: send = (...args) => fetch(...args),
}: ApiClientOptions) {
  let csrf = ''

  async function request<T>(method: Method, path: string, body?: object, extra?: Record<string, string>): Promise<T> {
    const headers = { ...apiHeaders(deviceGuid), ...extra }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (method !== 'GET' && csrf) headers['x-csrf-token'] = csrf
    let response: Response
    try {
      response = await send(`${base}${path}`, {
        method,
        headers,
        credentials: 'same-origin',
        body: body === undefined ? undefined : JSON.stringify(body),
      })
    } catch (error) {
      throw new RequestError('Network', 'The server could not be reached; check the connection.', {
        details: String(error),
      })
    }
    return readEnvelope<T>(response)
  }

  /** A state-changing request, repeated once with a fresh CSRF token when the session changed under the page. */
  async function change<T>(
    method: Exclude<Method, 'GET'>,
    path: string,
    body?: object,
    extra?: Record<string, string>,
  ): Promise<T> {
    try {
      return await request<T>(method, path, body, extra)
    } catch (error) {
      if (!isFailure(error, 'CsrfRejected') || !csrf) throw error
      const before = csrf
      if ((await refreshCsrf()) === before || !csrf) throw error
      return request<T>(method, path, body, extra)
    }
  }

  /** The session's CSRF token as the gateway tells it now ('' when not signed in). */
  async function refreshCsrf(): Promise<string> {
    try {
      csrf = (await request<{ csrf: string }>('GET', '/auth/v1/session')).csrf
    } catch (error) {
      if (!isFailure(error, 'SessionRequired', 'Unauthenticated')) throw error
      csrf = ''
    }
    return csrf
  }

  return {
    deviceGuid,

    /** GET `path` with the query; resolves to the envelope's result. */
    get<T>(path: string, query: Query = {}): Promise<T> {
      const entries = Object.entries(query).filter((entry): entry is [string, string | number | boolean] => {
        return entry[1] !== undefined
      })
      const search = entries.length === 0 ? '' : `?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)]))}`
      return request<T>('GET', `${path}${search}`)
    },

    /**
     * POST `body` as JSON to `path`. A CsrfRejected answer while a token is held means the session
     * changed under the page (signed in again in another tab): the token is re-read once and the
     * call repeated.
     */
    post: <T>(path: string, body: object = {}) => change<T>('POST', path, body),

    /**
     * POSTs an operation that must happen once (send_message, docs/chat-api.md "Sending once") with
     * a new Idempotency-Key, and sends it again with the same key, twice at most, while no answer
     * came or the gateway says the module failed or was going away: the module answers a repeat of
     * a stored operation with its first outcome, so a lost answer never makes a second message.
     */
    async postOnce<T>(path: string, body: object): Promise<T> {
      const key = { 'idempotency-key': randomGuid() }
      for (const pause of REPEAT_PAUSES_MS) {
        try {
          return await change<T>('POST', path, body, key)
        } catch (error) {
          if (!(error instanceof RequestError) || !REPEATED_AFTER.has(error.kind)) throw error
        }
        await new Promise((resolve) => setTimeout(resolve, pause))
      }
      return change<T>('POST', path, body, key)
    },

    /** PATCH `body` as JSON to `path`, as `post` does. */
    patch: <T>(path: string, body: object) => change<T>('PATCH', path, body),

    /** DELETE `path`, as `post` does. */
    delete: <T>(path: string) => change<T>('DELETE', path),

    /**
     * GET `path` as bytes (a file download). A failure answers with the envelope, read as for any
     * other request; a network failure is a RequestError of kind Network.
     */
    async getBlob(path: string): Promise<Blob> {
      let response: Response
      try {
        response = await send(`${base}${path}`, {
          headers: { 'x-device-guid': deviceGuid },
          credentials: 'same-origin',
        })
      } catch (error) {
        throw new RequestError('Network', 'The server could not be reached; check the connection.', {
          details: String(error),
        })
      }
      if (!response.ok) return readEnvelope<never>(response)
      return response.blob()
    },

    /**
     * POSTs `body` as a request that outlives the page (fetch with keepalive, for pagehide): unlike
     * navigator.sendBeacon it carries X-CSRF-Token, so the gateway's CSRF rule holds for it too
     * (docs/calls.md, "Leaving the page"). Nothing waits for its answer.
     */
    beacon(path: string, body: object): void {
      const headers = apiHeaders(deviceGuid)
      headers['content-type'] = 'application/json'
      if (csrf) headers['x-csrf-token'] = csrf
      send(`${base}${path}`, {
        method: 'POST',
        headers,
        credentials: 'same-origin',
        body: JSON.stringify(body),
        keepalive: true,
      }).catch(() => {})
    },

    /** The session's CSRF token as last known, for requests made outside this client (tus uploads). */
    csrfToken: () => csrf,

    /** Keeps the CSRF token a sign-in or the session answered. */
    setCsrf(token: string) {
      csrf = token
    },

    refreshCsrf,
  }
}

export type ApiClient = ReturnType<typeof createApiClient>
