/** A pino destination: pino writes each entry as one JSON line to `write`. */
export interface LogStream {
  write(line: string): void
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: '', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' }
// Fields every entry has, or that the line shows in its own place.
const SHOWN = new Set(['level', 'time', 'pid', 'hostname', 'reqId', 'msg', 'err', 'req', 'res', 'responseTime'])
// Requests whose completion never comes (a connection cut before Fastify logs it) are forgotten past this.
const MAX_PENDING = 10_000

interface Entry {
  level?: number
  time?: number
  reqId?: string
  msg?: string
  req?: { method?: string; url?: string }
  res?: { statusCode?: number }
  responseTime?: number
  err?: { type?: string; message?: string; stack?: string }
  [field: string]: unknown
}

function clock(time: number | undefined): string {
  return new Date(time ?? Date.now()).toISOString().slice(11, 19)
}

function fieldsOf(entry: Entry): string {
  return Object.entries(entry)
    .filter(([name]) => !SHOWN.has(name))
    .map(([name, value]) => `${name}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ')
}

/**
 * Formats one entry for people: `12:04:05 GET /auth/v1/health 200 3 ms` for a finished request,
 * else the time, the level when it is not info, the message and its other fields as name=value.
 * An error's stack is shown from level error up; a warning shows only the error's message.
 */
function formatEntry(entry: Entry, pending: Map<string, string>): string | undefined {
  const reqId = entry.reqId ?? ''
  if (entry.msg === 'incoming request' && entry.req) {
    // The path without its query: queries may carry tokens (magic links), and lines stay short.
    pending.set(reqId, `${entry.req.method} ${(entry.req.url ?? '').split('?')[0]}`)
    if (pending.size > MAX_PENDING) pending.delete(pending.keys().next().value!)
    return undefined
  }
  if (entry.msg === 'request completed' && entry.res) {
    const request = pending.get(reqId) ?? 'request'
    pending.delete(reqId)
    return `${clock(entry.time)} ${request} ${entry.res.statusCode} ${Math.round(entry.responseTime ?? 0)} ms`
  }
  const level = LEVELS[entry.level ?? 30] ?? String(entry.level)
  const fields = fieldsOf(entry)
  const parts = [clock(entry.time), level, entry.msg ?? '', fields].filter(Boolean)
  if (entry.err) {
    const failure = `${entry.err.type ?? 'Error'}: ${entry.err.message ?? ''}`
    parts.push((entry.level ?? 30) >= 50 && entry.err.stack ? `\n${entry.err.stack}` : `(${failure})`)
  }
  return parts.join(' ')
}

/**
 * A log destination for development (`LogFormat: "pretty"`): one short line per request (method,
 * path, status, milliseconds) and readable lines for everything else, instead of pino's JSON.
 * Production keeps the JSON lines (`LogFormat: "json"`), which log collectors parse.
 */
export function createPrettyLogStream(out: (text: string) => void = (text) => process.stdout.write(text)): LogStream {
  const pending = new Map<string, string>()
  return {
    write(chunk: string) {
      for (const line of chunk.split('\n')) {
        if (line === '') continue
        let entry: Entry
        try {
          entry = JSON.parse(line) as Entry
        } catch {
          out(`${line}\n`)
          continue
        }
        const text = formatEntry(entry, pending)
        if (text !== undefined) out(`${text}\n`)
      }
    },
  }
}
