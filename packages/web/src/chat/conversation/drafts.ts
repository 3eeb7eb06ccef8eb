import { localStorageOrNone } from '../../start-up.ts'

/** Where a person's unsent text of one chat is kept in this browser. */
const PREFIX = 'atrium.draft.'
const keyOf = (person: string, chatId: string) => `${PREFIX}${person}.${chatId}`

/**
 * A person's unsent message in each chat, kept in this browser (localStorage) so that switching
 * chats or reloading keeps it, as chat apps keep drafts. Blocked storage keeps nothing. A person's
 * drafts are read from storage once and then kept up to date by `save` and `forget`: the chat list
 * asks for them at every render without going over the storage's keys again.
 */
export function createDrafts(storage: Storage | undefined = localStorageOrNone()) {
  /** Each person's drafts by chat id, as read from storage or written since. */
  const known = new Map<string, Map<string, string>>()

  /** Every draft of a person, by chat id (for the chat list). */
  function all(person: string): ReadonlyMap<string, string> {
    let found = known.get(person)
    if (found) return found
    found = new Map<string, string>()
    const own = `${PREFIX}${person}.`
    for (let index = 0; storage && index < storage.length; index++) {
      const key = storage.key(index)
      if (key?.startsWith(own)) found.set(key.slice(own.length), storage.getItem(key) ?? '')
    }
    known.set(person, found)
    return found
  }

  return {
    read(person: string, chatId: string): string {
      return storage?.getItem(keyOf(person, chatId)) ?? ''
    },
    /** Keeps `text` as the draft; an empty or blank text removes it. */
    save(person: string, chatId: string, text: string): void {
      try {
        if (text.trim() === '') storage?.removeItem(keyOf(person, chatId))
        else storage?.setItem(keyOf(person, chatId), text)
      } catch {
        // A full storage keeps the previous draft; the text stays in the field.
        return
      }
      if (!storage) return
      if (text.trim() === '') known.get(person)?.delete(chatId)
      else known.get(person)?.set(chatId, text)
    },
    all,
    /** Removes every draft of a person (at sign-out, so the next person on this browser sees none). */
    forget(person: string): void {
      for (const chatId of all(person).keys()) storage?.removeItem(keyOf(person, chatId))
      known.delete(person)
    },
    /** Reads storage again at the next `all`: another tab changed it. */
    reload(): void {
      known.clear()
    },
  }
}

export type Drafts = ReturnType<typeof createDrafts>

let page: Drafts | undefined

/** The one drafts store of this page, on localStorage; drafts another tab writes reach it by the `storage` event. */
export function pageDrafts(): Drafts {
  if (page) return page
  const drafts = createDrafts()
  addEventListener('storage', (event) => {
    if (event.key === null || event.key.startsWith(PREFIX)) drafts.reload()
  })
  page = drafts
  return drafts
}
