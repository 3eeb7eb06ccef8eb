import { readdir, readFile, readlink, rename, rm, stat, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { compareVersions, isSemanticVersion } from './versions.ts'

/**
 * What `npm run build` writes beside each bundle, `dist/<process>/<version>/manifest.json`
 * (docs/operations.md, "Releases and rollback").
 */
export interface ReleaseManifest {
  process: string
  version: string
  /** The project domain embedded in the bundle. */
  domain: string
  /** ISO 8601 UTC time of the build. */
  builtAt: string
  /** The git commit the build was made from, when the checkout was a git repository. */
  commit?: string
  /** The schema the build needs: the setting naming its database and the newest migration it applies. */
  schema: { setting: string; migration: string }
}

/** The pointer in `dist/<process>/` naming the build that runs: a symbolic link to its version directory. */
export const CURRENT_POINTER = 'current'
export const MANIFEST_FILE = 'manifest.json'

/** The directory of one build: `<dist>/<process>/<version>`. */
export function releaseDir(dist: string, process: string, version: string): string {
  return join(dist, process, version)
}

/** The entry a supervisor starts for the active build: `<dist>/<process>/current/main.mjs`. */
export function currentEntry(dist: string, process: string): string {
  return join(dist, process, CURRENT_POINTER, 'main.mjs')
}

function isManifest(value: unknown): value is ReleaseManifest {
  const manifest = value as ReleaseManifest
  return (
    typeof manifest === 'object' &&
    manifest !== null &&
    typeof manifest.process === 'string' &&
    typeof manifest.version === 'string' &&
    typeof manifest.domain === 'string' &&
    typeof manifest.builtAt === 'string' &&
    (manifest.commit === undefined || typeof manifest.commit === 'string') &&
    typeof manifest.schema?.setting === 'string' &&
    typeof manifest.schema?.migration === 'string'
  )
}

/** Reads a build's manifest; throws naming the file when it is missing or malformed. */
export async function readManifest(dir: string): Promise<ReleaseManifest> {
  const file = join(dir, MANIFEST_FILE)
  const value: unknown = JSON.parse(await readFile(file, 'utf8'))
  if (!isManifest(value)) throw new Error(`${file} is not a build manifest`)
  return value
}

function missing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code
  return code === 'ENOENT' || code === 'ENOTDIR'
}

/** The version the `current` pointer of a process names, or undefined when it has none. */
export async function activeVersion(dist: string, process: string): Promise<string | undefined> {
  try {
    return await readlink(join(dist, process, CURRENT_POINTER))
  } catch (error) {
    if (missing(error)) return undefined
    throw error
  }
}

/** The builds of one process, oldest version first. */
export async function listBuilds(dist: string, process: string): Promise<ReleaseManifest[]> {
  let entries: string[]
  try {
    entries = await readdir(join(dist, process))
  } catch (error) {
    if (missing(error)) return []
    throw error
  }
  const builds: ReleaseManifest[] = []
  for (const entry of entries.filter(isSemanticVersion)) {
    try {
      builds.push(await readManifest(releaseDir(dist, process, entry)))
    } catch (error) {
      // A version directory without a manifest is a build in progress or a leftover, not a build.
      if (!missing(error)) throw error
    }
  }
  return builds.sort((a, b) => compareVersions(a.version, b.version))
}

/** Every process with at least one build in `dist`, by name. */
export async function listReleaseProcesses(dist: string): Promise<string[]> {
  let entries: string[]
  try {
    entries = await readdir(dist)
  } catch (error) {
    if (missing(error)) return []
    throw error
  }
  const processes: string[] = []
  for (const entry of entries.sort()) {
    if ((await stat(join(dist, entry))).isDirectory() && (await listBuilds(dist, entry)).length > 0) {
      processes.push(entry)
    }
  }
  return processes
}

/**
 * Points `dist/<process>/current` at the build of `version` (which must exist) in one step: a new
 * link is made beside the pointer and renamed over it, so a reader sees the old build or the new
 * one, never neither.
 */
export async function pointCurrent(dist: string, process: string, version: string): Promise<void> {
  await readManifest(releaseDir(dist, process, version))
  const pointer = join(dist, process, CURRENT_POINTER)
  const next = `${pointer}.${globalThis.process.pid}.next`
  await rm(next, { force: true })
  // Relative, so that the dist directory can move as a whole.
  await symlink(version, next)
  await rename(next, pointer)
}
