import type { IncomingMessage } from 'node:http'
import type { Http2ServerRequest } from 'node:http2'

/** How long a request body the answer did not need may keep arriving before the connection is cut. */
export const UNREAD_BODY_DRAIN_MS = 10_000

/**
 * Reads and discards what is left of a request body after its answer was sent without it (an
 * early 413 or 401, or a module that answered before reading), for at most `drainMs`. Closing at
 * once instead would reset a client that is still sending, which can then lose the answer; leaving
 * the body unread would stall the connection's next request. Once the body ends, an HTTP/1
 * connection takes its next request; past the limit the connection (HTTP/2: the stream) is cut.
 */
export function drainUnreadBody(request: IncomingMessage | Http2ServerRequest, drainMs = UNREAD_BODY_DRAIN_MS): void {
  if (request.complete || request.destroyed) return
  const timer = setTimeout(() => {
    if (request.complete) return
    if ('stream' in request) request.stream.close()
    else request.socket.destroy()
  }, drainMs)
  timer.unref()
  request.once('end', () => clearTimeout(timer))
  request.once('close', () => clearTimeout(timer))
  // Read in paused mode: resume() does nothing while a 'readable' listener is left (a body
  // iterator that stopped part way leaves one), and reading works whichever mode the body is in.
  const discard = () => {
    while (request.read() !== null);
  }
  request.on('readable', discard)
  discard()
}
