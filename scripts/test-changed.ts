/**
 * `npm run test:changed [-- --base REV] [-- --list]`: runs the test files of what changed, for use
 * while working (docs/development.md, "Tests of a change"). What changed is every file changed since
 * the base (committed or not) and every untracked file; the base is `--base`, else the branch's
 * upstream, else `main` on another branch, else HEAD (only what is not committed yet).
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '..')
const COMPILE_CACHE = join(ROOT, 'node_modules', '.cache', 'node-compile')

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
}

function tryGit(...args: string[]): string | undefined {
  try {
    return git(...args)
  } catch {
    return undefined
  }
}

/** The revision changes are counted from when no --base is given. */
export function defaultBase(): string {
  const upstream = tryGit('rev-parse', '--abbrev-ref', '--symbolic-full-name', '@{upstream}')
  if (upstream) return upstream
  const branch = tryGit('rev-parse', '--abbrev-ref', 'HEAD')
  if (branch && branch !== 'main' && tryGit('rev-parse', '--verify', '--quiet', 'main')) return 'main'
  return 'HEAD'
}

/** Every file changed since `base` (its merge base with HEAD), committed or not, and every untracked file. */
export function changedFiles(base: string): string[] {
  const since = git('merge-base', base, 'HEAD')
  const lines = [git('diff', '--name-only', since), git('ls-files', '--others', '--exclude-standard')].flatMap((text) =>
    text.split('\n'),
  )
  return [...new Set(lines.filter(Boolean))].sort()
}

/** The test files below `dir` (relative to the root), as the test command's globs would find them. */
function testFilesUnder(dir: string, root: string): string[] {
  const found: string[] = []
  const walk = (relative: string) => {
    if (!existsSync(join(root, relative))) return
    for (const entry of readdirSync(join(root, relative), { withFileTypes: true })) {
      const path = `${relative}/${entry.name}`
      if (entry.isDirectory() && entry.name !== 'node_modules') walk(path)
      else if (entry.isFile() && entry.name.endsWith('.test.ts')) found.push(path)
    }
  }
  walk(dir)
  return found
}

/**
 * The test files that cover the changed paths: a test file itself; for a file in a capability folder
 * (`packages/<p>/src/<folder>/…`) every test of that folder; for a package's top-level source, its
 * `test/` helpers or its package.json every test of the package; for a script its own test, else
 * every script test; for the docs the test that checks the generated ones. Paths that name no test
 * (the root's settings, bench/) are answered in `unmapped`.
 */
export function testsFor(changed: string[], root = ROOT): { tests: string[]; unmapped: string[] } {
  const tests = new Set<string>()
  const unmapped: string[] = []
  const add = (files: string[]) => {
    for (const file of files) tests.add(file)
  }
  for (const path of changed) {
    const parts = path.split('/')
    if (path.endsWith('.test.ts') && /^(packages\/[^/]+\/src|scripts)\//.test(path)) {
      if (existsSync(join(root, path))) tests.add(path)
    } else if (parts[0] === 'packages' && parts.length > 2) {
      const inFolder = parts[2] === 'src' && parts.length > 4
      add(testFilesUnder(inFolder ? parts.slice(0, 4).join('/') : `packages/${parts[1]}/src`, root))
    } else if (parts[0] === 'scripts') {
      const own = path.replace(/\.ts$/, '.test.ts')
      add(existsSync(join(root, own)) ? [own] : testFilesUnder('scripts', root))
    } else if (parts[0] === 'docs') {
      add(['scripts/docs.test.ts'])
    } else {
      unmapped.push(path)
    }
  }
  return { tests: [...tests].sort(), unmapped }
}

function main(args: string[]) {
  const baseAt = args.indexOf('--base')
  const base = baseAt === -1 ? defaultBase() : args[baseAt + 1]
  if (!base) throw new Error('--base needs a revision')
  const { tests, unmapped } = testsFor(changedFiles(base))
  if (unmapped.length > 0) console.log(`No test files for: ${unmapped.join(', ')}`)
  if (tests.length === 0) {
    console.log(`Nothing to test: no changed file since ${base} maps to a test file.`)
    return
  }
  console.log(`${tests.length} test files for the changes since ${base}:\n  ${tests.join('\n  ')}`)
  if (args.includes('--list')) return
  const child = spawn(
    process.execPath,
    [
      '--test',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=./scripts/test-timing.ts',
      '--test-reporter-destination=stdout',
      '--test-concurrency=3',
      '--test-timeout=120000',
      ...tests,
    ],
    // The compile cache the test command uses (docs/development.md, "Where the time goes").
    { cwd: ROOT, stdio: 'inherit', env: { ...process.env, NODE_COMPILE_CACHE: COMPILE_CACHE } },
  )
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
}

if (import.meta.main) main(process.argv.slice(2))
