/**
 * Builds the browser client (Preact + Vite) for the gateway's static service: `npm start` builds
 * it when the build is missing or older than its sources, `npm run build` writes it beside the
 * process bundles, and the browser tests build it into a temporary directory.
 */
import { createHash } from 'node:crypto'
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import preact from '@preact/preset-vite'
import { build as bundle } from 'esbuild'
import { build, type InlineConfig, type Plugin } from 'vite'

/** The web package's directory (Vite's root: index.html, public/, src/). */
export const WEB_ROOT = fileURLToPath(new URL('.', import.meta.url))

/** Where the gateway mounts the client (Static.Apps); every asset URL starts with it. */
export const CLIENT_MOUNT = '/chat/'

/** The development build the gateway serves by default (`Static.Apps`: `/chat/` → packages/web/dist/chat). */
export const DEFAULT_CLIENT_DIR = join(WEB_ROOT, 'dist', 'chat')

/** Inputs of the build; a change to any of them makes the build stale. Tests are not inputs. */
const SOURCES = ['index.html', 'public', 'src', 'build-client.ts', 'vite.config.ts', 'package.json']
const NOT_SOURCE = /(\.test\.ts|[\\/]e2e)$/

/** The start-up requests (src/early-requests.ts) as one classic script, minified. */
async function bundleEarlyRequests(): Promise<string> {
  const { outputFiles } = await bundle({
    stdin: {
      contents: "import { startPageEarlyRequests } from './src/early-requests.ts'\nstartPageEarlyRequests()",
      resolveDir: WEB_ROOT,
      loader: 'ts',
    },
    bundle: true,
    write: false,
    format: 'iife',
    minify: true,
    target: 'es2022',
  })
  return `${outputFiles[0]!.text.trim()}\n`
}

/**
 * Puts the start-up requests into index.html as a classic script of their own file, so they start
 * while the HTML is parsed, before the client's own script has arrived. It goes first in the head:
 * a classic script after a stylesheet would wait for the stylesheet. A file rather than inline
 * code, so the client runs under `script-src 'self'` (docs/serving.md, "Frontend policies"); its
 * name carries a hash of its contents like Vite's assets, so it is cached for a year.
 */
function earlyRequestsScript(): Plugin {
  let script: { fileName: string; source: string } | undefined
  async function earlyScript() {
    if (!script) {
      const source = await bundleEarlyRequests()
      const hash = createHash('sha256').update(source).digest('hex').slice(0, 8)
      script = { fileName: `assets/early-requests-${hash}.js`, source }
    }
    return script
  }
  return {
    name: 'atrium-early-requests',
    async transformIndexHtml() {
      const { fileName } = await earlyScript()
      return [{ tag: 'script', attrs: { src: `${CLIENT_MOUNT}${fileName}` }, injectTo: 'head-prepend' }]
    },
    async generateBundle() {
      const { fileName, source } = await earlyScript()
      this.emitFile({ type: 'asset', fileName, source })
    },
  }
}

/**
 * The Vite settings of the client, writing to `outDir`. `domain` is the project domain a deployable
 * build embeds (`import.meta.env.ATRIUM_DOMAIN`): a page opened on it moves to the fastest of
 * p1, p2 and p3 (src/api/address-choice.ts); '' (development and tests) probes nothing.
 */
export function clientViteConfig(outDir = DEFAULT_CLIENT_DIR, domain = ''): InlineConfig {
  return {
    define: { 'import.meta.env.ATRIUM_DOMAIN': JSON.stringify(domain) },
    configFile: false,
    root: WEB_ROOT,
    base: CLIENT_MOUNT,
    logLevel: 'warn',
    plugins: [preact({ prefreshEnabled: false, devToolsEnabled: false }), earlyRequestsScript()],
    build: { outDir, emptyOutDir: true, target: 'es2022', sourcemap: true, reportCompressedSize: false },
  }
}

/** Builds the client into `outDir` (default: the development build the gateway serves), embedding `domain`. */
export async function buildClient(outDir = DEFAULT_CLIENT_DIR, domain = ''): Promise<string> {
  await build(clientViteConfig(outDir, domain))
  return outDir
}

async function newestChange(path: string): Promise<number> {
  let info: Awaited<ReturnType<typeof stat>>
  try {
    info = await stat(path)
  } catch {
    return 0
  }
  if (!info.isDirectory()) return info.mtimeMs
  const entries = await readdir(path)
  const times = await Promise.all(
    entries.filter((name) => !NOT_SOURCE.test(join(path, name))).map((name) => newestChange(join(path, name))),
  )
  return Math.max(info.mtimeMs, ...times)
}

/** When a source of the client last changed (epoch ms of the newest modification). */
export async function newestSourceChange(): Promise<number> {
  const sources = await Promise.all(SOURCES.map((source) => newestChange(join(WEB_ROOT, source))))
  return Math.max(...sources)
}

/** True when `outDir` has no build, or one older than a source file. */
export async function clientBuildIsStale(outDir = DEFAULT_CLIENT_DIR): Promise<boolean> {
  const built = await newestChange(join(outDir, 'index.html'))
  return built === 0 || (await newestSourceChange()) > built
}
