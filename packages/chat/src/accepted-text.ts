import { ApiError, REFUSED_CONTROL, type Service } from '@atrium/platform'

/**
 * Refuses, before any handler or database sees it, a request whose body, query string or path
 * parameters hold a string (value or object key, at any depth) that is not well-formed Unicode or
 * contains a C0 control character other than tab, line feed and carriage return: InvalidRequest,
 * naming the field. One rule for every chat operation and both dialects (docs/chat-api.md "Text").
 */
export function installAcceptedText(app: Service): void {
  app.addHook('preValidation', async (request) => {
    for (const [part, value] of [
      ['body', request.body],
      ['querystring', request.query],
      ['params', request.params],
    ] as const) {
      const refusal = findRefusedText(part, value)
      if (refusal !== undefined) throw new ApiError('InvalidRequest', refusal)
    }
  })
}

/**
 * Why the first refused string under `value` is refused, with where it is written as schema errors
 * write it (`body/widget/rows/0`); undefined when every string is accepted.
 */
function findRefusedText(part: string, value: unknown): string | undefined {
  // An explicit stack rather than recursion: a JSON body may nest deeper than the call stack.
  const pending: [unknown, string][] = [[value, part]]
  while (pending.length > 0) {
    const [item, where] = pending.pop()!
    if (typeof item === 'string') {
      const refusal = refuseText(item)
      if (refusal !== undefined) return `${where} ${refusal}`
    } else if (typeof item === 'object' && item !== null) {
      // Arrays too: their entries are keyed by index.
      for (const [key, element] of Object.entries(item)) {
        const refusal = refuseText(key)
        if (refusal !== undefined) return `${where} has a field name that ${refusal}`
        pending.push([element, `${where}/${key}`])
      }
    }
  }
  return undefined
}

function refuseText(text: string): string | undefined {
  const control = REFUSED_CONTROL.exec(text)
  if (control !== null) {
    const codePoint = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')
    return `holds U+${codePoint}: text may not contain control characters other than tab, line feed and carriage return`
  }
  if (!text.isWellFormed()) return 'holds a lone surrogate: text must be well-formed Unicode'
  return undefined
}
