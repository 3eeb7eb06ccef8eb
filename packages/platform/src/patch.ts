/**
 * Update semantics of the spec ("Platform rules"): in an update payload an omitted or null field
 * means "do not update that value". Every update operation builds its changes with `patchOf`.
 */

/** A patch: each field may be omitted or null, meaning keep the stored value. */
export type Patch<T> = { [K in keyof T]?: T[K] | null }

/** The fields of a patch that change something: omitted, undefined and null fields are dropped. */
export function patchOf<T extends object>(patch: Patch<T>): Partial<T> {
  const changes: Partial<T> = {}
  for (const key of Object.keys(patch) as (keyof T)[]) {
    const value = patch[key]
    if (value !== undefined && value !== null) changes[key] = value
  }
  return changes
}

/** True when the patch changes nothing, so the update can be skipped. */
export function isEmptyPatch<T extends object>(patch: Patch<T>): boolean {
  return Object.keys(patchOf(patch)).length === 0
}

/** A copy of `record` with the patch applied by the same rule. */
export function applyPatch<T extends object>(record: T, patch: Patch<T>): T {
  return { ...record, ...patchOf(patch) }
}
