/**
 * Summary of a V8 .cpuprofile for bench/sse.ts: self time per function and per area (the gateway's
 * events code, Fastify, Node's HTTP/stream/net internals, GC, idle), in % of the profiled time.
 */
import { readFileSync } from 'node:fs'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
}

interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

function shortUrl(url: string): string {
  if (url === '') return ''
  const packages = url.indexOf('/packages/')
  if (packages >= 0) return url.slice(packages + 1)
  const modules = url.lastIndexOf('/node_modules/')
  if (modules >= 0) return url.slice(modules + '/node_modules/'.length)
  return url
}

function areaOf(name: string, url: string): string {
  if (name === '(idle)') return 'idle'
  if (name === '(garbage collector)') return 'GC'
  if (name === '(program)') return 'V8/native (program)'
  if (url.includes('packages/gateway/src/events/')) return 'gateway events/'
  if (url.includes('packages/')) return 'other Atrium code'
  if (url.includes('fastify') || url.includes('avvio') || url.includes('find-my-way') || url.includes('pino'))
    return 'Fastify'
  if (url.includes('undici') || url.startsWith('node:internal/deps/undici')) return 'undici (fetch)'
  if (/node:(internal\/)?(streams?|http|_http|net|stream)/.test(url)) return 'Node http/net/stream'
  if (url.startsWith('node:')) return 'other Node internals'
  if (url === '') return 'native / builtins'
  return 'other packages'
}

/** Lines of text: the top `limit` functions by self time and the time per area, both in % of the profile. */
export function summariseProfile(path: string, limit = 15): string[] {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfMicros = new Map<number, number>()
  let total = 0
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + delta)
    total += delta
  })
  const byFunction = new Map<string, number>()
  const byArea = new Map<string, number>()
  for (const [id, micros] of selfMicros) {
    const { functionName, url, lineNumber } = nodes.get(id)!.callFrame
    const name = functionName || '(anonymous)'
    const where = shortUrl(url)
    const key = where ? `${name} ${where}:${lineNumber + 1}` : name
    byFunction.set(key, (byFunction.get(key) ?? 0) + micros)
    const area = areaOf(name, url)
    byArea.set(area, (byArea.get(area) ?? 0) + micros)
  }
  const share = (micros: number) => `${((micros / total) * 100).toFixed(1)}%`.padStart(6)
  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1])
  return [
    `profile: ${(total / 1e6).toFixed(1)} s sampled`,
    'by area (self time):',
    ...sorted(byArea).map(([area, micros]) => `  ${share(micros)}  ${area}`),
    `top ${limit} functions (self time):`,
    ...sorted(byFunction)
      .slice(0, limit)
      .map(([key, micros]) => `  ${share(micros)}  ${key}`),
  ]
}
