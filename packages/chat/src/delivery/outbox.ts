import { randomBytes } from 'node:crypto'
import { mkdir, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/** What a person needs from one outbox message: who it is for, and the code and link it carries. */
export interface OutboxNote {
  channel: 'email' | 'sms'
  to: string
  subject?: string
  /** The one-time code of a sign-in or verification message. */
  code?: string
  /** The magic link that does what the code does. */
  link?: string
  /** The message's plain text. */
  text: string
}

/**
 * The readable form of an outbox message: `Name: value` header lines (Channel, To, Subject, Code,
 * Link), a blank line, then the plain text, unencoded, so a link copied from it works. The .eml
 * beside it keeps the bytes an SMTP server would get, where a long link is quoted-printable.
 */
export function formatOutboxNote({ channel, to, subject, code, link, text }: OutboxNote): string {
  const headers: [string, string | undefined][] = [
    ['Channel', channel],
    ['To', to],
    ['Subject', subject],
    ['Code', code],
    ['Link', link],
  ]
  const lines = headers.filter(([, value]) => value).map(([name, value]) => `${name}: ${value}`)
  return `${lines.join('\n')}\n\n${text}${text.endsWith('\n') ? '' : '\n'}`
}

/**
 * The local outbox directory: each message is `<time>-<random>.txt` (readable, see
 * formatOutboxNote) and, for mail, the `.eml` of the same name. The .txt appears last and whole
 * (written aside, then renamed), so whoever watches the directory reads complete messages.
 */
export function createOutbox(path: string) {
  return {
    path,
    /** Writes one message; returns the path of its .txt. */
    async write(note: OutboxNote, eml?: Buffer): Promise<string> {
      await mkdir(path, { recursive: true, mode: 0o700 })
      const time = new Date().toISOString().replace(/[:.]/g, '-')
      const base = join(path, `${time}-${randomBytes(4).toString('hex')}`)
      // The files hold one-time codes and reset links: readable by the operator's account only.
      if (eml) await writeFile(`${base}.eml`, eml, { flag: 'wx', mode: 0o600 })
      await writeFile(`${base}.txt.part`, formatOutboxNote(note), { flag: 'wx', mode: 0o600 })
      await rename(`${base}.txt.part`, `${base}.txt`)
      return `${base}.txt`
    },
  }
}

export type Outbox = ReturnType<typeof createOutbox>
