/** Content types of the files a frontend build holds, by lower-case extension. */
const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json; charset=utf-8',
  map: 'application/json; charset=utf-8',
  webmanifest: 'application/manifest+json; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  svg: 'image/svg+xml; charset=utf-8',
  wasm: 'application/wasm',
  ico: 'image/x-icon',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
  wav: 'audio/wav',
  mp4: 'video/mp4',
  webm: 'video/webm',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
}

/** Formats whose bytes are already compressed: brotli or gzip would only cost CPU. */
const COMPRESSED = new Set([
  'png',
  'jpg',
  'jpeg',
  'gif',
  'webp',
  'avif',
  'woff',
  'woff2',
  'mp3',
  'ogg',
  'mp4',
  'webm',
  'zip',
  'gz',
  'br',
])

/** The extension of a path's last segment, lower-case, or '' when it has none. */
export function extensionOf(path: string): string {
  const slash = path.lastIndexOf('/')
  const dot = path.lastIndexOf('.')
  return dot > slash + 1 ? path.slice(dot + 1).toLowerCase() : ''
}

/** The Content-Type header of a file; unknown types are served as bytes. */
export function contentTypeOf(path: string): string {
  return TYPES[extensionOf(path)] ?? 'application/octet-stream'
}

/** True when compressing the file could pay off. */
export function isCompressible(path: string): boolean {
  return !COMPRESSED.has(extensionOf(path))
}

// Vite's `name-[hash].ext` (and webpack's `name.[contenthash].ext`): a token of 8 or more hash
// characters after the last `-` or `.`, holding a digit or an upper-case letter after a lower-case
// one, so that a plain word (`my-component.js`) is not taken for a hash. A hash that looks like
// a word only loses the long caching, never gets stale content.
const HASHED_NAME = /[-.](?=[A-Za-z0-9_]*(?:[0-9]|[a-z][A-Z]))[A-Za-z0-9_]{8,}\.[A-Za-z0-9]+$/

/** True when the file's name carries a content hash, so its contents never change. */
export function isHashedName(path: string): boolean {
  return HASHED_NAME.test(path.slice(path.lastIndexOf('/') + 1))
}
