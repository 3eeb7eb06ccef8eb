/**
 * A node:test reporter that ends a run with where its time went: the 20 slowest test files, and the
 * time of all files by package and by kind (docs/development.md, "Where the time goes"). It reads
 * the runner's own events: with process isolation the runner reports each file as a top-level test
 * named by its path, whose duration is the file's process from start to end.
 */
import { readFileSync } from 'node:fs'
import { relative, resolve } from 'node:path'

/** How many of the slowest files the report lists. */
const SLOWEST = 20

/** What a test file mostly costs: a browser, the started system, a database, or none of them. */
export type TestKind = 'browser' | 'system start' | 'database' | 'unit'

/** One test file's time, as the runner reported it. */
export interface FileTime {
  /** The path relative to the working directory. */
  path: string
  seconds: number
  passed: boolean
}

/**
 * The kind of a test file from its path and source: browser tests drive Chromium (in or importing
 * from an `e2e/` folder, or importing playwright-core), system tests start processes of their own
 * (importing node:child_process or the started system), database tests run per dialect.
 */
export function kindOf(path: string, source: string): TestKind {
  const imports = [...source.matchAll(/^import\s[^;]*?from\s+'([^']+)'/gm)].map((match) => match[1]!)
  if (path.includes('/e2e/') || imports.some((from) => from.includes('/e2e/') || from === 'playwright-core')) {
    return 'browser'
  }
  if (imports.some((from) => from === 'node:child_process' || from.includes('started-system'))) return 'system start'
  if (/^\s*(?:forEachDialect|forEachStorage)\(|\bcreateTestDatabaseUrl\(t\b/m.test(source)) return 'database'
  return 'unit'
}

/** The package a test file belongs to: `packages/<name>/…` gives the name, anything else its first folder. */
export function packageOf(path: string): string {
  const parts = path.split('/')
  return parts[0] === 'packages' && parts.length > 2 ? parts[1]! : parts[0]!
}

function seconds(value: number): string {
  return `${value.toFixed(1).padStart(7)} s`
}

function count(files: number): string {
  return files === 1 ? '1 file' : `${files} files`
}

function sourceOf(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}

/** The report's lines for the files of one run and the run's wall-clock time. */
export function renderTiming(files: FileTime[], wallSeconds: number, read = sourceOf): string[] {
  const sorted = [...files].sort((a, b) => b.seconds - a.seconds)
  const total = files.reduce((sum, file) => sum + file.seconds, 0)
  const groups = (keyOf: (file: FileTime) => string) => {
    const sums = new Map<string, { seconds: number; files: number }>()
    for (const file of files) {
      const entry = sums.get(keyOf(file)) ?? { seconds: 0, files: 0 }
      entry.seconds += file.seconds
      entry.files++
      sums.set(keyOf(file), entry)
    }
    return [...sums].sort((a, b) => b[1].seconds - a[1].seconds)
  }
  const kinds = new Map(files.map((file) => [file.path, kindOf(file.path, read(file.path))]))
  const lines = [
    '',
    `Test time: ${count(files.length)}, ${seconds(total).trim()} of file time in ${seconds(wallSeconds).trim()} of wall-clock time`,
    `The ${Math.min(SLOWEST, files.length)} slowest files:`,
    ...sorted
      .slice(0, SLOWEST)
      .map(
        (file) => `  ${seconds(file.seconds)}  ${file.path} (${kinds.get(file.path)})${file.passed ? '' : ' FAILED'}`,
      ),
    'By package:',
    ...groups((file) => packageOf(file.path)).map(
      ([name, sum]) => `  ${seconds(sum.seconds)}  ${name} (${count(sum.files)})`,
    ),
    'By kind:',
    ...groups((file) => kinds.get(file.path)!).map(
      ([name, sum]) => `  ${seconds(sum.seconds)}  ${name} (${count(sum.files)})`,
    ),
  ]
  return lines
}

interface TestEvent {
  type: string
  data: {
    name?: string
    file?: string
    nesting?: number
    details?: { duration_ms?: number; passed?: boolean }
    counts?: { passed: number; failed: number; skipped: number; todo: number; cancelled: number }
  }
}

/**
 * The reporter: collects each file's time and prints the report when the run ends, closing with the
 * run's counts on a line of their own (`Tests: N passed, N failed, N skipped`), as the runner's own
 * summary counts them, so the log's last line still says what ran.
 */
export default async function* testTiming(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const started = performance.now()
  const files: FileTime[] = []
  let counts: NonNullable<TestEvent['data']['counts']> | undefined
  for await (const event of source) {
    const { name, file, nesting, details } = event.data
    // The run's summary is the one that names no file; each file's process sends its own too.
    if (event.type === 'test:summary' && file === undefined) counts = event.data.counts
    if (event.type !== 'test:complete' || nesting !== 0 || !name || !file || resolve(name) !== file) continue
    files.push({
      path: relative(process.cwd(), file),
      seconds: (details?.duration_ms ?? 0) / 1000,
      passed: details?.passed === true,
    })
  }
  const lines = files.length > 0 ? renderTiming(files, (performance.now() - started) / 1000) : []
  if (counts) {
    const failed = counts.failed + counts.cancelled
    lines.push(`Tests: ${counts.passed} passed, ${failed} failed, ${counts.skipped + counts.todo} skipped`)
  }
  if (lines.length > 0) yield `${lines.join('\n')}\n`
}
