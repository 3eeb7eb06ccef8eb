/**
 * The value of one sample in a Prometheus text exposition: the line of metric `name` whose labels
 * include `labels`; 0 when no such line exists yet (a counter or histogram nobody touched).
 */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!match || match[1] !== name) continue
    const found = new Map(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((pair) => [pair[1], pair[2]]),
    )
    if (Object.entries(labels).every(([key, value]) => found.get(key) === value)) return Number(match[3])
  }
  return 0
}
