import { crc32, deflateSync } from 'node:zlib'

/** The gateway's icon: an arched doorway (an atrium's entrance) on an indigo rounded square. */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">' +
  '<rect width="32" height="32" rx="7" fill="#4f46e5"/>' +
  '<path d="M10 26V14a6 6 0 0 1 12 0v12z" fill="#fff"/></svg>\n'

const SIZE = 32
const SAMPLES = 4
const INDIGO = [0x4f, 0x46, 0xe5]

/** Where the SVG above paints at a point: 0 nothing, 1 the square, 2 the doorway. */
function paintAt(x: number, y: number): number {
  const doorway = x >= 10 && x <= 22 && y <= 26 && (y >= 14 || (x - 16) ** 2 + (y - 14) ** 2 <= 36)
  if (doorway) return 2
  // The rounded square: inside unless in a corner beyond its 7-unit radius.
  const cx = Math.min(Math.max(x, 7), SIZE - 7)
  const cy = Math.min(Math.max(y, 7), SIZE - 7)
  return (x - cx) ** 2 + (y - cy) ** 2 <= 49 ? 1 : 0
}

/** The icon as 32×32 RGBA pixels, each averaged over 4×4 samples so the edges are smooth. */
function renderPixels(): Buffer {
  const pixels = Buffer.alloc(SIZE * SIZE * 4)
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      let square = 0
      let doorway = 0
      for (let sy = 0; sy < SAMPLES; sy++) {
        for (let sx = 0; sx < SAMPLES; sx++) {
          const paint = paintAt(x + (sx + 0.5) / SAMPLES, y + (sy + 0.5) / SAMPLES)
          if (paint === 1) square++
          else if (paint === 2) doorway++
        }
      }
      const covered = square + doorway
      const offset = (y * SIZE + x) * 4
      for (let channel = 0; channel < 3; channel++) {
        pixels[offset + channel] = covered === 0 ? 0 : Math.round((INDIGO[channel]! * square + 255 * doorway) / covered)
      }
      pixels[offset + 3] = Math.round((255 * covered) / SAMPLES ** 2)
    }
  }
  return pixels
}

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, 'latin1')
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0)
  return Buffer.concat([head, data, crc])
}

/** A PNG (RGBA, 8 bits per channel) of the pixels. */
function encodePng(pixels: Buffer): Buffer {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(SIZE, 0)
  header.writeUInt32BE(SIZE, 4)
  header.set([8, 6, 0, 0, 0], 8)
  const rows = Buffer.alloc(SIZE * (SIZE * 4 + 1))
  // Each scanline starts with its filter type, 0 (none).
  for (let y = 0; y < SIZE; y++) pixels.copy(rows, y * (SIZE * 4 + 1) + 1, y * SIZE * 4, (y + 1) * SIZE * 4)
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(rows, { level: 9 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ])
}

/** The icon as /favicon.ico: an ICO file holding one 32×32 PNG, which every current browser reads. */
export function renderFaviconIco(): Buffer {
  const png = encodePng(renderPixels())
  const ico = Buffer.alloc(22)
  ico.writeUInt16LE(1, 2) // type: icon
  ico.writeUInt16LE(1, 4) // one image
  ico.set([SIZE, SIZE, 0, 0], 6) // width, height, no palette, reserved
  ico.writeUInt16LE(1, 10) // colour planes
  ico.writeUInt16LE(32, 12) // bits per pixel
  ico.writeUInt32LE(png.length, 14)
  ico.writeUInt32LE(22, 18) // offset of the image
  return Buffer.concat([ico, png])
}
