#!/usr/bin/env node
// Launcher of the `atrium` CLI (npx atrium …). The CLI is TypeScript run by Node 24's type
// stripping; this file is plain JavaScript so that any Node can start it. Under another Node it
// re-executes the project's pinned Node (node_modules/.bin/node, from the `node` package) on the
// CLI, and refuses clearly when there is none.
import { spawnSync } from 'node:child_process'
import { existsSync, realpathSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const REQUIRED_MAJOR = 24
const launcher = realpathSync(fileURLToPath(import.meta.url))
const main = join(dirname(launcher), 'main.ts')

function pinnedNode() {
  for (let dir = dirname(main); ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', '.bin', 'node')
    if (existsSync(candidate)) return candidate
    if (dirname(dir) === dir) return undefined
  }
}

if (Number(process.versions.node.split('.')[0]) === REQUIRED_MAJOR) {
  await import(main)
} else {
  // Once re-executed, a Node that is still not 24 is refused instead of looping.
  const node = process.env.ATRIUM_CLI_REEXEC ? undefined : pinnedNode()
  if (!node) {
    process.stderr.write(
      `atrium: Node.js ${REQUIRED_MAJOR} is required (this is ${process.version}); run \`npm install\` in the checkout, which brings it as node_modules/.bin/node.\n`,
    )
    process.exit(2)
  }
  const child = spawnSync(node, [launcher, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, ATRIUM_CLI_REEXEC: '1' },
  })
  if (child.error) {
    process.stderr.write(`atrium: cannot start ${node}: ${child.error.message}\n`)
    process.exit(2)
  }
  process.exit(child.status ?? 2)
}
