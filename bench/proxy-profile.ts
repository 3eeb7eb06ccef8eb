/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): the functions with the most self time and
 * the share of each code area (a package, node internals, this project's files, GC).
 *   node bench/proxy-profile.ts <file.cpuprofile> [top]
 */
import { readFileSync } from 'node:fs'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }
  children?: number[]
}

interface CpuProfile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

export interface ProfileLine {
  name: string
  /** Where: a file and line, shortened. */
  where: string
  area: string
  selfMs: number
  /** Share of the busy (non-idle) time. */
  share: number
  /** The JavaScript caller most of the self time came through (for native functions and internals). */
  caller: string
}

export interface ProfileSummary {
  totalMs: number
  idleMs: number
  top: ProfileLine[]
  areas: { area: string; selfMs: number; share: number }[]
  /** This project's functions by inclusive time (their synchronous callees included). */
  project: { name: string; totalMs: number; share: number }[]
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/')
  if (modules !== -1) return url.slice(modules + 'node_modules/'.length)
  const packages = url.indexOf('/packages/')
  if (packages !== -1) return url.slice(packages + 1)
  const bench = url.indexOf('/bench/')
  if (bench !== -1) return url.slice(bench + 1)
  return url
}

function areaOf(name: string, url: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)'
  if (url.startsWith('node:')) return 'node internals'
  const modules = url.lastIndexOf('node_modules/')
  if (modules !== -1) {
    const [scope = '', name = ''] = url.slice(modules + 'node_modules/'.length).split('/')
    return scope.startsWith('@') ? `${scope}/${name}` : scope
  }
  const packages = /\/packages\/([^/]+)\/src\/([^/]+)/.exec(url)
  if (packages) return `${packages[1]}/${packages[2]?.replace(/\.ts$/, '')}`
  return shortUrl(url)
}

/** Self time per function (by name and location) and per area; busy time is all but (idle) and the profiler's calls. */
export function summariseProfile(profile: CpuProfile, top = 20): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parentOf = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id)
  const label = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame
    return `${functionName || '(anonymous)'}${url ? ` ${shortUrl(url)}:${lineNumber + 1}` : ''}`
  }
  const selfMicros = new Map<number, number>()
  profile.samples.forEach((id, index) => {
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0))
  })
  const functions = new Map<
    string,
    { name: string; where: string; area: string; micros: number; callers: Map<string, number> }
  >()
  const areas = new Map<string, number>()
  const project = new Map<string, number>()
  let total = 0
  let idle = 0
  for (const [id, micros] of selfMicros) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame
    const name = functionName || '(anonymous)'
    total += micros
    // The profiler's own start and stop (node:inspector) are not the gateway's work.
    if (name === '(idle)' || url === 'node:inspector') {
      idle += micros
      continue
    }
    const where = url ? `${shortUrl(url)}:${lineNumber + 1}` : ''
    const key = `${name} ${where}`
    const entry = functions.get(key) ?? { name, where, area: areaOf(name, url), micros: 0, callers: new Map() }
    entry.micros += micros
    const parent = byId.get(parentOf.get(id) ?? -1)
    if (parent) {
      const caller = label(parent)
      entry.callers.set(caller, (entry.callers.get(caller) ?? 0) + micros)
    }
    functions.set(key, entry)
    areas.set(entry.area, (areas.get(entry.area) ?? 0) + micros)
    const seen = new Set<string>()
    for (let node = byId.get(id); node; node = byId.get(parentOf.get(node.id) ?? -1)) {
      if (!node.callFrame.url.includes('/packages/')) continue
      const name = label(node)
      if (seen.has(name)) continue
      seen.add(name)
      project.set(name, (project.get(name) ?? 0) + micros)
    }
  }
  const busy = total - idle || 1
  return {
    totalMs: total / 1000,
    idleMs: idle / 1000,
    top: [...functions.values()]
      .sort((a, b) => b.micros - a.micros)
      .slice(0, top)
      .map(({ name, where, area, micros, callers }) => ({
        name,
        where,
        area,
        selfMs: micros / 1000,
        share: micros / busy,
        caller: [...callers].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '',
      })),
    areas: [...areas]
      .sort((a, b) => b[1] - a[1])
      .map(([area, micros]) => ({ area, selfMs: micros / 1000, share: micros / busy })),
    project: [...project]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, micros]) => ({ name, totalMs: micros / 1000, share: micros / busy })),
  }
}

/** The summary as Markdown tables. */
export function formatProfile(summary: ProfileSummary, areas = 12): string {
  const percent = (share: number) => `${(share * 100).toFixed(1)}%`
  const lines = [
    `Busy ${(summary.totalMs - summary.idleMs).toFixed(0)} ms of ${summary.totalMs.toFixed(0)} ms sampled (shares are of busy time).`,
    '',
    '| # | function | where | self ms | share | mostly called from |',
    '|---|---|---|---|---|---|',
    ...summary.top.map(
      (line, index) =>
        `| ${index + 1} | \`${line.name}\` | ${line.where || line.area} | ${line.selfMs.toFixed(0)} | ${percent(line.share)} | ${line.caller} |`,
    ),
    '',
    '| area | self ms | share |',
    '|---|---|---|',
    ...summary.areas
      .slice(0, areas)
      .map((area) => `| ${area.area} | ${area.selfMs.toFixed(0)} | ${percent(area.share)} |`),
    '',
    '| project function (inclusive of synchronous callees) | total ms | share |',
    '|---|---|---|',
    ...summary.project
      .slice(0, areas)
      .map((line) => `| \`${line.name}\` | ${line.totalMs.toFixed(0)} | ${percent(line.share)} |`),
  ]
  return lines.join('\n')
}

if (import.meta.main) {
  const [file, top = '20'] = process.argv.slice(2)
  if (!file) throw new Error('usage: node bench/proxy-profile.ts <file.cpuprofile> [top]')
  console.log(formatProfile(summariseProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, Number(top))))
}
