import { createContext } from 'preact'
import { useContext, useEffect, useState } from 'preact/hooks'
import type { PersonView } from '../api/auth-api.ts'

/** How the client asks for names it does not have (get_profiles). */
export type NameLookup = (ids: string[]) => Promise<Array<{ member: string; name: string }>>

/**
 * The names of people the client has seen: from member lists, lookups and live ProfileChanged
 * events, so every place that shows a person shows the same, current name (docs/people.md).
 */
export function createPeopleNames(lookup: NameLookup, search: (q: string) => Promise<PersonView[]>) {
  const names = new Map<string, string>()
  const listeners = new Set<() => void>()
  const asked = new Set<string>()
  let pending = new Set<string>()
  let timer: ReturnType<typeof setTimeout> | undefined

  /** Counts the changes, so a view can tell whether it missed one. */
  let version = 0
  function changed() {
    version++
    for (const listener of listeners) listener()
  }

  function flush() {
    timer = undefined
    const ids = [...pending].slice(0, 200)
    pending = new Set([...pending].slice(200))
    if (pending.size > 0) timer = setTimeout(flush, 0)
    lookup(ids)
      .then((profiles) => {
        for (const { member, name } of profiles) names.set(member, name)
        if (profiles.length > 0) changed()
      })
      .catch(() => {
        for (const id of ids) asked.delete(id)
      })
  }

  return {
    /** GET /auth/v1/people: finds people by name or a complete contact. */
    search,

    /** The known name, or undefined (then `want` it). */
    get: (id: string): string | undefined => names.get(id),

    /** Records names (a member list, a live rename). */
    learn(entries: Array<{ id: string; name: string }>): void {
      let any = false
      for (const { id, name } of entries) {
        if (names.get(id) === name) continue
        names.set(id, name)
        any = true
      }
      if (any) changed()
    },

    /** Asks the chat module for names not known yet, in one batched call. */
    want(ids: string[]): void {
      for (const id of ids) {
        if (names.has(id) || asked.has(id)) continue
        asked.add(id)
        pending.add(id)
      }
      if (pending.size > 0 && !timer) timer = setTimeout(flush, 0)
    },

    subscribe(listener: () => void): () => void {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    /** How many times the names changed so far. */
    version: () => version,
  }
}

export type PeopleNames = ReturnType<typeof createPeopleNames>

/** The fallback rule of docs/people.md, while a name is not known. */
export function fallbackName(id: string): string {
  return `User ${id.slice(-4)}`
}

/** The shortest text the people search is asked for, and the pause in typing before it is asked. */
export const PEOPLE_SEARCH_MIN_QUERY = 2
export const PEOPLE_SEARCH_PAUSE_MS = 250

export const PeopleNamesContext = createContext<PeopleNames | undefined>(undefined)

/** The people-names store of the messenger, re-rendering the caller when a name changes. */
export function usePeopleNames(): PeopleNames | undefined {
  const names = useContext(PeopleNamesContext)
  const [, setVersion] = useState(0)
  const rendered = names?.version()
  useEffect(() => {
    if (!names) return
    const update = () => setVersion(names.version())
    const stop = names.subscribe(update)
    // Effects run after the frame: a name that arrived between the render and now (one the render
    // asked for, say) would otherwise not show until something else re-renders.
    if (names.version() !== rendered) update()
    return stop
  }, [names])
  return names
}

/** The words for a refused id (UserNotFound): nobody in this project has it. */
export function unknownPersonText(id: string): string {
  return `There is nobody with the user id ${id} here. Find people by name or email instead.`
}

/** The words for several refused ids, e.g. a new group's members. */
export function unknownPeopleText(ids: string[]): string {
  if (ids.length === 1) return unknownPersonText(ids[0]!)
  return `There is nobody with the user ids ${ids.join(', ')} here. Add people from the members panel by name or email.`
}
