/** What a build embeds in a deployable bundle (`npm run build -- --domain example.com`). */
export interface BuildInfo {
  /** The project domain this build serves, without port. */
  domain: string
  /** The package version the bundle was built from. */
  version: string
  /** ISO 8601 UTC time of the build. */
  builtAt: string
}

/**
 * The embedded build, or null in an unbuilt checkout, which runs as a development build serving
 * only the development sentinels. The build script replaces this module's body in the bundle, so
 * changing the domain takes a new build (spec: "Platform rules").
 */
export const buildInfo: BuildInfo | null = null
