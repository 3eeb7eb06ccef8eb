import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { crc32, deflateSync } from 'node:zlib'
import type { Download, Page } from 'playwright-core'

/** A file the test made itself, to compare with what the other side downloads. */
export interface TestFile {
  name: string
  mimeType: string
  buffer: Buffer
}

/** `size` random bytes as a file the browser does not know the type of. */
export function randomFile(name: string, size: number, mimeType = 'application/octet-stream'): TestFile {
  return { name, mimeType, buffer: randomBytes(size) }
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}

/** A real PNG of `width` x `height` random RGB pixels, so the browser can draw it. */
export function pngFile(name: string, width = 64, height = 48): TestFile {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8)
  const rows = Buffer.concat(
    Array.from({ length: height }, () => Buffer.concat([Buffer.from([0]), randomBytes(width * 3)])),
  )
  const buffer = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(rows)),
    pngChunk('IEND', Buffer.alloc(0)),
  ])
  return { name, mimeType: 'image/png', buffer }
}

/** Attaches files (made by the test, or paths on disk) with the composer's 📎 button and its file chooser. */
export async function attachByButton(page: Page, files: TestFile[] | string[]) {
  const [chooser] = await Promise.all([
    page.waitForEvent('filechooser'),
    page.getByRole('button', { name: 'Attach files' }).click(),
  ])
  await chooser.setFiles(files)
}

/** Drops a file on the open conversation, as the browser does for a drag from the desktop. */
export async function dropFile(page: Page, file: TestFile) {
  const payload = { name: file.name, type: file.mimeType, base64: file.buffer.toString('base64') }
  await page.evaluate(({ name, type, base64 }) => {
    const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0))
    const transfer = new DataTransfer()
    transfer.items.add(new File([bytes], name, { type }))
    const target = document.querySelector('article.conversation .message-scroll') ?? document.body
    target.dispatchEvent(new DragEvent('dragenter', { dataTransfer: transfer, bubbles: true, cancelable: true }))
    target.dispatchEvent(new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true }))
    Object.assign(window, { pendingDrop: transfer })
  }, payload)
  // The overlay tells where the drop goes before it happens.
  await page.getByText('Drop files to attach them').waitFor()
  await page.evaluate(() => {
    const transfer = (window as unknown as { pendingDrop: DataTransfer }).pendingDrop
    const target = document.querySelector('article.conversation .message-scroll') ?? document.body
    target.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }))
  })
}

/** Pastes a file into the message field, as a copied image or file arrives from the clipboard. */
export async function pasteFile(page: Page, file: TestFile) {
  const payload = { name: file.name, type: file.mimeType, base64: file.buffer.toString('base64') }
  await page.evaluate(({ name, type, base64 }) => {
    const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0))
    const transfer = new DataTransfer()
    transfer.items.add(new File([bytes], name, { type }))
    const field = document.querySelector('#composer-text')!
    field.dispatchEvent(new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true, cancelable: true }))
  }, payload)
}

/** Waits until `count` attachments of the tray are uploaded and ready to send. */
export async function waitUploaded(page: Page, count: number) {
  await page.waitForFunction((n) => document.querySelectorAll('.attachment-done').length === n, count, {
    timeout: 60_000,
  })
}

/** The bytes of a download the page started with `start`. */
export async function downloadedBytes(page: Page, start: () => Promise<unknown>): Promise<Buffer> {
  const [download] = (await Promise.all([page.waitForEvent('download'), start()])) as [Download, unknown]
  const path = await download.path()
  return readFile(path)
}

/** Console noise of requests the test broke on purpose (aborted PATCHes, offline). */
export function withoutBrokenRequests(errors: string[]): string[] {
  return errors.filter(
    (error) =>
      !/ERR_(CONNECTION_RESET|FAILED|INTERNET_DISCONNECTED|ABORTED)|status of 415 \(Unsupported Media Type\) \(\S+\/auth\/v1\/uploads\)/.test(
        error,
      ),
  )
}
