/**
 * The fields of a package.json that version its processes: `version`, and `processVersions` where
 * one package holds several processes (the reference package: wallet, crm, payment).
 */
export interface PackageVersions {
  version?: string
  processVersions?: Record<string, string>
}

// Semantic versions (semver.org) without build metadata: a version names a directory under dist/.
const SEMANTIC_VERSION = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/

/** Whether `text` is a semantic version such as `1.2.0` or `2.0.0-rc.1`. */
export function isSemanticVersion(text: string): boolean {
  return SEMANTIC_VERSION.test(text)
}

/**
 * The version of process `name` from its package.json: its entry in `processVersions`, else the
 * package's `version`. Throws when that is missing or not a semantic version.
 */
export function processVersion(pkg: PackageVersions, name: string): string {
  const version = pkg.processVersions?.[name] ?? pkg.version
  if (version === undefined) throw new Error(`no version for process ${name}: set "version" in its package.json`)
  if (!isSemanticVersion(version)) {
    throw new Error(`the version of process ${name}, ${JSON.stringify(version)}, is not a semantic version like 1.2.0`)
  }
  return version
}

/** Orders semantic versions by precedence (semver.org §11): negative when a comes first. */
export function compareVersions(a: string, b: string): number {
  const [, ...left] = SEMANTIC_VERSION.exec(a) ?? []
  const [, ...right] = SEMANTIC_VERSION.exec(b) ?? []
  if (left.length === 0 || right.length === 0) return a.localeCompare(b)
  for (let i = 0; i < 3; i++) {
    const difference = Number(left[i]) - Number(right[i])
    if (difference !== 0) return difference
  }
  const [leftPre, rightPre] = [left[3], right[3]]
  if (leftPre === rightPre) return 0
  // A pre-release comes before its release.
  if (leftPre === undefined) return 1
  if (rightPre === undefined) return -1
  const leftParts = leftPre.split('.')
  const rightParts = rightPre.split('.')
  for (let i = 0; i < Math.min(leftParts.length, rightParts.length); i++) {
    const [x, y] = [leftParts[i]!, rightParts[i]!]
    const numeric = /^\d+$/.test(x) && /^\d+$/.test(y)
    const difference = numeric ? Number(x) - Number(y) : x < y ? -1 : x > y ? 1 : 0
    if (difference !== 0) return difference
  }
  return leftParts.length - rightParts.length
}
