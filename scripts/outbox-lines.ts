import { mkdirSync, readdirSync, watch } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * The line `npm start` prints for one readable outbox message (the chat module's `.txt`: header
 * lines, a blank line, the text): `[sign-in] <to>  code <code>  <link>` for a message with a code,
 * else `[outbox] <to>  <subject>  <file>`.
 */
export function outboxLine(text: string, file: string): string {
  const headers = new Map<string, string>()
  for (const line of text.split('\n')) {
    if (line === '') break
    const colon = line.indexOf(': ')
    if (colon > 0) headers.set(line.slice(0, colon), line.slice(colon + 2))
  }
  const to = headers.get('To') ?? '?'
  const code = headers.get('Code')
  if (code) return `[sign-in] ${to}  code ${code}${headers.has('Link') ? `  ${headers.get('Link')}` : ''}`
  return `[outbox] ${to}  ${headers.get('Subject') ?? headers.get('Channel') ?? 'message'}  ${file}`
}

/**
 * Prints a line for every message that appears in the outbox directory from now on (created when
 * missing); returns a function that stops watching. Files already there are old news.
 */
export function printOutbox(dir: string, print: (line: string) => void): () => void {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const seen = new Set(readdirSync(dir))
  let scanning = Promise.resolve()
  async function scan() {
    for (const name of readdirSync(dir).sort()) {
      // The .txt is renamed into place whole; its `.part` and the .eml are not for people.
      if (seen.has(name) || !name.endsWith('.txt')) continue
      seen.add(name)
      const file = join(dir, name)
      print(outboxLine(await readFile(file, 'utf8'), file))
    }
  }
  const watcher = watch(dir, () => {
    scanning = scanning.then(scan).catch((error) => print(`[outbox] cannot read ${dir}: ${error.message}`))
  })
  return () => watcher.close()
}
